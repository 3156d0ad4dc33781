-- 003: what the vault needs beyond 001's certificates table.
--
-- * DEACTIVATED is an operator decision distinct from INACTIVE (superseded, kept for rollback).
-- * active_ibge equals ibge while the row is the municipality's ACTIVE certificate and is NULL otherwise;
--   its unique key makes "at most one ACTIVE certificate per municipality" a database invariant (MySQL
--   5.6 has no partial or functional indexes; NULLs never collide in a unique key).
-- * The chain (leaf + intermediates, PEM) is encrypted like the other secrets: the vault hands it out
--   with the key, and keeping every credential column ciphertext means nothing readable about a
--   municipality's credential sits in a dump.
-- * activated_at has millisecond precision because the credential version handed to the ADN gateway is
--   derived from it; two activations of one certificate within a second must still differ.
ALTER TABLE certificates
  MODIFY status ENUM('active', 'inactive', 'deactivated') NOT NULL DEFAULT 'active',
  ADD COLUMN active_ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL AFTER status,
  ADD COLUMN chain_length SMALLINT UNSIGNED NOT NULL DEFAULT 1 AFTER cnpj,
  ADD COLUMN chain_ciphertext MEDIUMBLOB NULL AFTER private_key_auth_tag,
  ADD COLUMN chain_nonce VARBINARY(16) NULL DEFAULT NULL AFTER chain_ciphertext,
  ADD COLUMN chain_auth_tag VARBINARY(16) NULL DEFAULT NULL AFTER chain_nonce,
  ADD COLUMN imported_by VARCHAR(128) NULL DEFAULT NULL AFTER chain_auth_tag,
  ADD COLUMN activated_at DATETIME(3) NULL DEFAULT NULL AFTER updated_at,
  ADD COLUMN activated_by VARCHAR(128) NULL DEFAULT NULL AFTER activated_at,
  ADD COLUMN deactivated_by VARCHAR(128) NULL DEFAULT NULL AFTER deactivated_at,
  ADD COLUMN deactivation_reason TEXT NULL AFTER deactivated_by,
  ADD UNIQUE KEY uq_certificates_active_ibge (active_ibge);

-- One row per master key id the vault has ever encrypted under: a keyed check value (HMAC-SHA256 of a
-- fixed label, never the key) lets a restarted vault notice that a key id now names different key bytes
-- and refuse to start, instead of writing new rows that no one could later tell apart from tampering.
CREATE TABLE vault_master_keys (
  key_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  check_value CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (key_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
