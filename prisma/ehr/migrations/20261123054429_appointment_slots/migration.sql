-- AlterTable
ALTER TABLE "ehr"."Appointment" ADD COLUMN     "practitionerId" TEXT,
ADD COLUMN     "timeZone" TEXT;

-- CreateIndex
CREATE INDEX "Appointment_tenantId_practitionerId_start_idx" ON "ehr"."Appointment"("tenantId", "practitionerId", "start");

-- CreateIndex
CREATE INDEX "Appointment_tenantId_location_start_idx" ON "ehr"."Appointment"("tenantId", "location", "start");
