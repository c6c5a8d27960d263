-- When each pending payment changes by itself, so that any replica fires
-- what any replica created, and a restarted one needs nothing re-scheduled.
--
-- A pending payment expires at expires_at unless its scenario has a step
-- before that: step_at and step_status hold that first step. due_at is
-- whichever comes first, kept by PostgreSQL, so that a payment inserted
-- by any version of paymock is due at its expiry without more.
ALTER TABLE payments
    ADD COLUMN step_at     timestamptz,
    ADD COLUMN step_status text CHECK (step_status IN ('completed', 'failed', 'expired')),
    ADD COLUMN due_at      timestamptz GENERATED ALWAYS AS (coalesce(step_at, expires_at)) STORED;

-- One merchant's due payments, earliest first (an advance of its clock),
-- and every merchant's (the sweep of real clocks). Only pending payments
-- are ever due, so final ones stay out of both.
CREATE INDEX payments_due_per_merchant ON payments (merchant_id, due_at, seq) WHERE status = 'pending';
CREATE INDEX payments_due ON payments (due_at, seq) WHERE status = 'pending';

-- Replaced by payments_due: nothing looks pending payments up by expiry.
DROP INDEX payments_pending_by_expiry;
