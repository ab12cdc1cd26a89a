-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "ehr";

-- CreateTable
CREATE TABLE "ehr"."Patient" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "ehrId" TEXT NOT NULL,
    "givenNames" TEXT[],
    "family" TEXT NOT NULL,
    "birthDate" TEXT,
    "gender" TEXT,
    "phoneEnc" TEXT,
    "emailEnc" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "deletedAt" TIMESTAMP(3),

    CONSTRAINT "Patient_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateTable
CREATE TABLE "ehr"."Appointment" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "start" TIMESTAMP(3) NOT NULL,
    "end" TIMESTAMP(3) NOT NULL,
    "status" TEXT NOT NULL,
    "location" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Appointment_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateIndex
CREATE INDEX "Patient_tenantId_family_idx" ON "ehr"."Patient"("tenantId", "family");

-- CreateIndex
CREATE UNIQUE INDEX "Patient_tenantId_ehrId_key" ON "ehr"."Patient"("tenantId", "ehrId");

-- CreateIndex
CREATE INDEX "Appointment_tenantId_start_idx" ON "ehr"."Appointment"("tenantId", "start");

-- CreateIndex
CREATE INDEX "Appointment_tenantId_patientId_start_idx" ON "ehr"."Appointment"("tenantId", "patientId", "start");
