-- 002: what the store's RPCs need beyond 001 (proto/malha/store/v1). MySQL 5.6 dialect; same
-- conventions as 001 (UTC DATETIMEs, ascii codes, BIGINT UNSIGNED NSUs and counters).

-- Sync state: an operator reset must be returned exactly by the next BeginRun (not max'ed with the
-- stored rows); BeginRun with a token equal to the stored one is a retry only from the holder that
-- recorded it, which must be known after the run ended (locked_by is cleared then); the outcome of the
-- last run and the confirmed-holes counter are part of SyncState.
ALTER TABLE nfse_sync_state
  ADD COLUMN reset_pending TINYINT(1) NOT NULL DEFAULT 0 AFTER last_nsu,
  ADD COLUMN fence_holder VARCHAR(191) NULL DEFAULT NULL AFTER fence_token,
  ADD COLUMN last_outcome VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL AFTER last_error_message,
  ADD COLUMN holes_total BIGINT UNSIGNED NOT NULL DEFAULT 0 AFTER faults_total;

-- Runs: 001's `documents`/`events` count inserted rows; the store also keeps updates, progress, the
-- eligibility it set when the run finished, and operator cancellation requests (durable, so any
-- coordinator replica learns about them from ApplyBatch).
ALTER TABLE nfse_sync_runs
  ADD COLUMN pool VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL AFTER trigger_kind,
  ADD COLUMN last_progress_at DATETIME(3) NULL DEFAULT NULL AFTER finished_at,
  ADD COLUMN max_nsu_seen BIGINT UNSIGNED NOT NULL DEFAULT 0 AFTER to_nsu,
  ADD COLUMN batches INT UNSIGNED NOT NULL DEFAULT 0 AFTER max_nsu_seen,
  ADD COLUMN documents_updated INT UNSIGNED NOT NULL DEFAULT 0 AFTER documents,
  ADD COLUMN events_updated INT UNSIGNED NOT NULL DEFAULT 0 AFTER events,
  ADD COLUMN holes_recorded INT UNSIGNED NOT NULL DEFAULT 0 AFTER faults,
  ADD COLUMN next_eligible_at DATETIME(3) NULL DEFAULT NULL,
  ADD COLUMN cooldown_until DATETIME(3) NULL DEFAULT NULL,
  ADD COLUMN cancel_requested_at DATETIME(3) NULL DEFAULT NULL,
  ADD COLUMN cancel_requested_by VARCHAR(191) NULL DEFAULT NULL,
  ADD COLUMN cancel_reason VARCHAR(1000) NULL DEFAULT NULL;

-- Quarantine: keep the decompressed XML beside the raw payload (faults found after decompression can be
-- re-parsed), and DataHoraGeracao. Faults without an NSU (nsu = 0) must not collapse into one row, so
-- uniqueness becomes (feed, nsu, item_key): item_key is '' for a real NSU (the NSU identifies the item)
-- and a digest of the item for nsu = 0, so re-applying a batch still updates instead of adding.
ALTER TABLE nfse_quarantine
  ADD COLUMN item_key CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '' AFTER nsu,
  ADD COLUMN xml LONGBLOB NULL AFTER payload_sha256,
  ADD COLUMN data_geracao_adn DATETIME(3) NULL DEFAULT NULL AFTER xml,
  DROP INDEX uq_nfse_quarantine_feed_nsu,
  ADD UNIQUE KEY uq_nfse_quarantine_item (ibge, ambiente, tipo_nsu, nsu, item_key),
  ADD KEY ix_nfse_quarantine_reason (ibge, reason, ambiente, tipo_nsu, nsu);

-- An item whose note or event is already stored under another (feed, NSU) — the same chave distributed
-- again, or in a second series — keeps its first (feed, NSU) in the per-municipality table. Its own NSU
-- is recorded here so that the gap finder and the cursor see it as persisted.
CREATE TABLE nfse_nsu_aliases (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  ambiente TINYINT UNSIGNED NOT NULL,
  tipo_nsu VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  nsu BIGINT UNSIGNED NOT NULL,
  kind VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  item_id VARCHAR(62) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  run_id BIGINT UNSIGNED NULL DEFAULT NULL,
  created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uq_nfse_nsu_aliases_feed_nsu (ibge, ambiente, tipo_nsu, nsu)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Templates (no per-municipality table exists before this file: the store creates them). The typed
-- message is kept as protobuf binary so queries return the full Document/Event without re-parsing XML
-- (the index columns cannot hold every field); the XML stays the source of truth. ListEvents orders an
-- event-time range by dh_evento, which needs its own index.
ALTER TABLE nfse_documentos_template
  ADD COLUMN documento_pb MEDIUMBLOB NULL AFTER chave_substituta;

ALTER TABLE nfse_eventos_template
  ADD COLUMN evento_pb MEDIUMBLOB NULL AFTER chave_substituta,
  ADD KEY ix_data_evento (data_evento);
