-- 007: unfinished jobs by state. The reconciler (every BILLING_RECONCILE_SECONDS) and the open-jobs
-- gauges look for jobs in RECEIVED/VALIDATING/PROCESSING across tenants; without this index each pass
-- read the whole table, finished jobs included.

ALTER TABLE billing_jobs ADD KEY ix_billing_jobs_state_updated (state, updated_at);
