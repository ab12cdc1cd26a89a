-- CreateTable
CREATE TABLE "ehr"."EhrStatusVersion" (
    "tenantId" TEXT NOT NULL,
    "ehrId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "uid" TEXT NOT NULL,
    "contentEnc" TEXT NOT NULL,
    "committedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EhrStatusVersion_pkey" PRIMARY KEY ("tenantId","ehrId","version")
);

-- CreateIndex
CREATE UNIQUE INDEX "EhrStatusVersion_tenantId_uid_key" ON "ehr"."EhrStatusVersion"("tenantId", "uid");
