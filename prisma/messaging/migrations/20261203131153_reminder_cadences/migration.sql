-- AlterTable: one reminder per appointment and lead time of the tenant's cadence.
ALTER TABLE "messaging"."AppointmentReminder" ADD COLUMN     "leadMinutes" INTEGER;

-- The rows of before cadences were each made with their tenant's single lead time: that one, else the default (a day).
UPDATE "messaging"."AppointmentReminder" r SET "leadMinutes" = COALESCE(
  (SELECT CASE WHEN jsonb_typeof(o.settings -> 'reminderLeadMinutes') = 'number' THEN (o.settings ->> 'reminderLeadMinutes')::int END
   FROM "messaging"."Organization" o WHERE o.id = r."tenantId"),
  1440);

ALTER TABLE "messaging"."AppointmentReminder" ALTER COLUMN "leadMinutes" SET NOT NULL,
DROP CONSTRAINT "AppointmentReminder_pkey",
ADD CONSTRAINT "AppointmentReminder_pkey" PRIMARY KEY ("tenantId", "appointmentId", "leadMinutes");
