-- 004: artifact metadata (services/artifacts). The content lives in the artifacts storage backend
-- (ARTIFACT_DIR on disk by default). A row is inserted only after its blob was fsynced and renamed into
-- place, so a row always names complete content; the retention sweep deletes the blob of an expired
-- artifact and sets swept_at, keeping the row for audit.
--
-- Every string here is a code the service validates before writing ([A-Za-z0-9._/-], printable ASCII
-- for content types), hence ascii_bin: names are case-sensitive like the paths they look like, and the
-- unique key (64 + 128 + 255 bytes) stays under the 767-byte key-part limit.
-- created_at/expires_at are UTC with milliseconds: they order listings and decide expiry.

CREATE TABLE artifact_metadata (
  id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  tenant VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  job_id VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  name VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  content_type VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  size_bytes BIGINT UNSIGNED NOT NULL,
  sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  storage_key VARCHAR(200) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  swept_at DATETIME(3) NULL DEFAULT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_artifact_metadata_name (tenant, job_id, name),
  KEY ix_artifact_metadata_tenant_created (tenant, created_at, id),
  KEY ix_artifact_metadata_job_created (tenant, job_id, created_at, id),
  KEY ix_artifact_metadata_sweep (swept_at, expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
