-- 010: DANFSe export jobs (services/danfse). One row per export: its state and counts for polling, the
-- stored zip once done, and the heartbeat of the process running it. An export runs inside that one
-- process; when the process goes (restart, crash) the heartbeat stops and any danfse replica marks the
-- export FAILED with error INTERRUPTED, so none stays RUNNING forever. The notes themselves stay in the
-- store's tables; nothing here names a person.

CREATE TABLE danfse_exports (
  id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state TINYINT UNSIGNED NOT NULL,
  total INT UNSIGNED NOT NULL,
  rendered INT UNSIGNED NOT NULL DEFAULT 0,
  failed INT UNSIGNED NOT NULL DEFAULT 0,
  error VARCHAR(1000) NOT NULL DEFAULT '',
  holder VARCHAR(120) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  artifact_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  zip_size_bytes BIGINT UNSIGNED NULL DEFAULT NULL,
  zip_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  zip_expires_at DATETIME(3) NULL DEFAULT NULL,
  created_at DATETIME(3) NOT NULL,
  heartbeat_at DATETIME(3) NOT NULL,
  finished_at DATETIME(3) NULL DEFAULT NULL,
  PRIMARY KEY (id),
  KEY ix_danfse_exports_state_heartbeat (state, heartbeat_at),
  KEY ix_danfse_exports_finished (finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
