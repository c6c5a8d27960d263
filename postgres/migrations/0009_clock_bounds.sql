-- A frozen clock shows any instant up to 9999-12-31: nanoseconds since
-- 1970 pass a bigint in 2262, so frozen_ns becomes a numeric (a clock
-- must still read back exactly what was set).
ALTER TABLE clocks ALTER COLUMN frozen_ns TYPE numeric(22, 0);

-- Nothing ever used the schedule of migration 3: due payments are rows of
-- payments (migration 4), webhook sends of webhook_deliveries.
DROP TABLE schedule;
