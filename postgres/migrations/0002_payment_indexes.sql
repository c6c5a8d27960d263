-- A list page reads one merchant's newest payments without sorting them
-- all; the hosted pages find a payment by id alone; pending payments are
-- found by expiry when a sandbox starts and re-schedules them.
CREATE INDEX payments_newest_first ON payments (merchant_id, seq DESC);
CREATE INDEX payments_by_id ON payments (id);
CREATE INDEX payments_pending_by_expiry ON payments (expires_at) WHERE status = 'pending';
