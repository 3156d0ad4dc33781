-- 008: billing retention. Finished jobs older than BILLING_RETENTION_DAYS are deleted with everything
-- that names them (items with their inputs — pagadores' names and CPFs —, attempts, sub-batches,
-- occurrences, deliveries, idempotency keys, retorno files and fingerprints). These three tables are
-- keyed by tenant; the purge finds a job's rows by job_id.

ALTER TABLE billing_idempotency_keys ADD KEY ix_billing_idempotency_keys_job (job_id);
ALTER TABLE billing_retorno_files ADD KEY ix_billing_retorno_files_job (job_id);
ALTER TABLE billing_retorno_fingerprints ADD KEY ix_billing_retorno_fingerprints_job (job_id);
