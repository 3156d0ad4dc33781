-- 013: how many runs of a feed in a row ended at a page shorter than the ADN's page size without asking
-- the ADN again. A scheduled incremental run may end so only while this is below the coordinator's limit
-- (NFSE_SHORT_PAGE_END_RUNS); a run that hears the ADN's own "nothing newer" sets it back to 0
-- (docs/decisions/0061-incremental-runs-end-at-a-short-page.md).

ALTER TABLE nfse_sync_state ADD COLUMN short_page_ends TINYINT UNSIGNED NOT NULL DEFAULT 0 AFTER gaps_checked_nsu;
