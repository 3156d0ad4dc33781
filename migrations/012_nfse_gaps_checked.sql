-- 012: how far a feed's NSUs were found complete. The coordinator's gap scan (every
-- NFSE_RECONCILIATION_INTERVAL_SECONDS, and at its start) read every feed's tables from NSU 1 to the
-- cursor each time; it now scans only above this mark, which FindNsuGaps raises when a scan that starts
-- at or below it finds no gap (docs/decisions/0046-gap-scans-start-where-the-last-one-ended.md).

ALTER TABLE nfse_sync_state ADD COLUMN gaps_checked_nsu BIGINT UNSIGNED NOT NULL DEFAULT 0 AFTER last_nsu;
