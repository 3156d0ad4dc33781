-- 001: shared NFS-e tables (BLUEPRINT §6) and the per-municipality templates.
--
-- MySQL 5.6 dialect (checked by scripts/check-sql56.ts). Conventions used throughout:
--   * every DATETIME holds UTC; libs/db/pool.ts sets the session time_zone to +00:00 so that
--     CURRENT_TIMESTAMP defaults are UTC too. No TIMESTAMP columns (2038, implicit 5.6 defaults).
--   * a feed is (ibge, ambiente, tipo_nsu): ambiente is tpAmb (1 produção, 2 produção restrita /
--     homologação); tipo_nsu is the ADN series name (DISTRIBUICAO, RECEPCAO, GERAL, MEI), kept as a
--     string so a new series needs no ALTER of every per-municipality table.
--   * NSUs, fence tokens and counters are BIGINT UNSIGNED; money is BIGINT cents.
--   * codes (IBGE, chave, CNPJ/CPF, hex digests, NSU series, our own status words) are
--     CHARACTER SET ascii COLLATE ascii_bin, in every table alike so that joins between tables keep
--     using indexes; free text (names, messages) stays utf8mb4_unicode_ci, the table default. Besides
--     smaller indexes this keeps the per-municipality template under the 8126-byte worst-case row size
--     that InnoDB strict mode checks for COMPACT rows (utf8mb4 everywhere exceeds it). The store must
--     validate codes before writing them: strict mode rejects a non-ascii byte instead of dropping it.
--   * indexed utf8mb4 strings stay <= 191 characters (767 bytes with COMPACT rows).
--   * no foreign keys: the tables belong to different services (vault, store) and per-municipality
--     tables are created at run time; the services enforce the references.

CREATE TABLE municipalities (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT,
  ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  name VARCHAR(150) NOT NULL,
  uf CHAR(2) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  active TINYINT(1) NOT NULL DEFAULT 1,
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (id),
  UNIQUE KEY uq_municipalities_ibge (ibge),
  KEY ix_municipalities_active (active, ibge)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Certificates hold no secret in clear. Each secret is AES-256-GCM ciphertext + nonce + tag; the key id
-- and algorithm beside them let the vault rotate keys row by row and resume an interrupted rotation.
CREATE TABLE certificates (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  fingerprint_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  subject VARCHAR(1024) NOT NULL,
  issuer VARCHAR(1024) NOT NULL,
  serial_number VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  cnpj CHAR(14) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  not_before DATETIME NOT NULL,
  not_after DATETIME NOT NULL,
  status ENUM('active', 'inactive') NOT NULL DEFAULT 'active',
  key_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  algorithm VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  pfx_ciphertext MEDIUMBLOB NOT NULL,
  pfx_nonce VARBINARY(16) NOT NULL,
  pfx_auth_tag VARBINARY(16) NOT NULL,
  password_ciphertext BLOB NOT NULL,
  password_nonce VARBINARY(16) NOT NULL,
  password_auth_tag VARBINARY(16) NOT NULL,
  private_key_ciphertext BLOB NOT NULL,
  private_key_nonce VARBINARY(16) NOT NULL,
  private_key_auth_tag VARBINARY(16) NOT NULL,
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  deactivated_at DATETIME NULL DEFAULT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_certificates_fingerprint (fingerprint_sha256),
  KEY ix_certificates_ibge_status (ibge, status, not_after),
  KEY ix_certificates_expiry (status, not_after),
  KEY ix_certificates_key_id (key_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One cursor row per feed (seed 000). fence_token is the lease revision recorded by BeginRun; ApplyBatch
-- writes only when the caller's token still matches, so a stale holder cannot move the cursor.
CREATE TABLE nfse_sync_state (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  ambiente TINYINT UNSIGNED NOT NULL,
  tipo_nsu VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 1,
  last_nsu BIGINT UNSIGNED NOT NULL DEFAULT 0,
  max_nsu BIGINT UNSIGNED NOT NULL DEFAULT 0,
  status ENUM('idle', 'pending', 'running', 'error') NOT NULL DEFAULT 'idle',
  locked_at DATETIME(3) NULL DEFAULT NULL,
  locked_by VARCHAR(191) NULL DEFAULT NULL,
  fence_token BIGINT UNSIGNED NOT NULL DEFAULT 0,
  current_run_id BIGINT UNSIGNED NULL DEFAULT NULL,
  next_eligible_at DATETIME(3) NULL DEFAULT NULL,
  cooldown_until DATETIME(3) NULL DEFAULT NULL,
  last_success_at DATETIME(3) NULL DEFAULT NULL,
  last_error_at DATETIME(3) NULL DEFAULT NULL,
  last_error_message TEXT NULL,
  documents_total BIGINT UNSIGNED NOT NULL DEFAULT 0,
  events_total BIGINT UNSIGNED NOT NULL DEFAULT 0,
  faults_total BIGINT UNSIGNED NOT NULL DEFAULT 0,
  created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uq_nfse_sync_state_feed (ibge, ambiente, tipo_nsu),
  KEY ix_nfse_sync_state_status (status, locked_at),
  KEY ix_nfse_sync_state_eligible (enabled, next_eligible_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row per run of a feed. trigger_kind (e.g. incremental, bootstrap, manual, reconciliation) avoids
-- the reserved word TRIGGER. outcome is 'running' until the run ends (success, empty, rate_limited,
-- error, fenced, cancelled, yielded); cleanup deletes by outcome and finished_at.
CREATE TABLE nfse_sync_runs (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  ambiente TINYINT UNSIGNED NOT NULL,
  tipo_nsu VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  trigger_kind VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  holder VARCHAR(191) NOT NULL,
  fence_token BIGINT UNSIGNED NOT NULL,
  started_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  finished_at DATETIME(3) NULL DEFAULT NULL,
  from_nsu BIGINT UNSIGNED NOT NULL,
  to_nsu BIGINT UNSIGNED NULL DEFAULT NULL,
  documents INT UNSIGNED NOT NULL DEFAULT 0,
  events INT UNSIGNED NOT NULL DEFAULT 0,
  faults INT UNSIGNED NOT NULL DEFAULT 0,
  outcome VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'running',
  error_message TEXT NULL,
  PRIMARY KEY (id),
  KEY ix_nfse_sync_runs_feed_started (ibge, ambiente, tipo_nsu, started_at),
  KEY ix_nfse_sync_runs_started (started_at),
  KEY ix_nfse_sync_runs_cleanup (outcome, finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The cursor only moves backwards through an operator reset, and every reset is kept here.
CREATE TABLE nfse_cursor_resets (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  ambiente TINYINT UNSIGNED NOT NULL,
  tipo_nsu VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  old_nsu BIGINT UNSIGNED NOT NULL,
  new_nsu BIGINT UNSIGNED NOT NULL,
  operator VARCHAR(191) NOT NULL,
  reason TEXT NOT NULL,
  created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY ix_nfse_cursor_resets_feed (ibge, ambiente, tipo_nsu, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Items that could not be decoded or parsed, kept raw (payload as received) so nothing is ever dropped.
-- Unique per feed and NSU: re-applying a batch updates the row instead of adding one.
CREATE TABLE nfse_quarantine (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  ambiente TINYINT UNSIGNED NOT NULL,
  tipo_nsu VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  nsu BIGINT UNSIGNED NOT NULL,
  chave CHAR(50) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  tipo_documento VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  reason VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  message TEXT NULL,
  payload LONGBLOB NULL,
  payload_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  run_id BIGINT UNSIGNED NULL DEFAULT NULL,
  resolved_at DATETIME(3) NULL DEFAULT NULL,
  created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uq_nfse_quarantine_feed_nsu (ibge, ambiente, tipo_nsu, nsu),
  KEY ix_nfse_quarantine_chave (chave),
  KEY ix_nfse_quarantine_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- NSUs missing from a feed that a single-NSU lookup (lote=false) confirmed do not exist, so the gap
-- finder stops probing them.
CREATE TABLE nfse_confirmed_holes (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  ambiente TINYINT UNSIGNED NOT NULL,
  tipo_nsu VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  nsu BIGINT UNSIGNED NOT NULL,
  adn_code VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  message VARCHAR(1000) NULL DEFAULT NULL,
  run_id BIGINT UNSIGNED NULL DEFAULT NULL,
  confirmed_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uq_nfse_confirmed_holes_feed_nsu (ibge, ambiente, tipo_nsu, nsu)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Template of nfse_documentos_{ibge} (CREATE TABLE … LIKE). Index columns follow adn.md §4.3; the XML is
-- kept byte-exact with its sha256. Dates/times are UTC; competência is a calendar date. Party documents
-- are CNPJ (14) or CPF (11) characters; a foreign NIF goes to *_nif. Place names are not copied: the
-- IBGE codes identify them and the XML keeps the text. situacao is derived from events (ATIVA,
-- CANCELADA, SUBSTITUIDA, ANALISE_PENDENTE). Upsert: ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id).
-- Changing a template later: tables already copied from it keep their old shape (plain SQL cannot loop
-- over them), so the store has to bring them in line; and MariaDB accepts an ALTER that makes the
-- template too wide, then refuses the next CREATE TABLE … LIKE, which is why check-sql56 measures rows.
CREATE TABLE nfse_documentos_template (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  chave CHAR(50) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  ambiente TINYINT UNSIGNED NOT NULL,
  tipo_nsu VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  nsu BIGINT UNSIGNED NOT NULL,
  versao VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  numero VARCHAR(15) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  numero_dfse VARCHAR(15) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  status_geracao SMALLINT UNSIGNED NULL DEFAULT NULL,
  ambiente_gerador TINYINT UNSIGNED NULL DEFAULT NULL,
  tipo_emissao TINYINT UNSIGNED NULL DEFAULT NULL,
  municipio_emissor_ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  local_prestacao_ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  local_prestacao_pais CHAR(2) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  municipio_incidencia_ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  data_emissao DATETIME NULL DEFAULT NULL,
  data_processamento DATETIME NULL DEFAULT NULL,
  competencia DATE NULL DEFAULT NULL,
  data_geracao_adn DATETIME(3) NULL DEFAULT NULL,
  emitente_documento VARCHAR(14) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  emitente_nome VARCHAR(300) NULL DEFAULT NULL,
  emitente_im VARCHAR(15) NULL DEFAULT NULL,
  emitente_municipio_ibge CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  emitente_uf CHAR(2) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  tipo_emitente TINYINT UNSIGNED NULL DEFAULT NULL,
  prestador_documento VARCHAR(14) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  prestador_nif VARCHAR(40) NULL DEFAULT NULL,
  prestador_nome VARCHAR(300) NULL DEFAULT NULL,
  prestador_im VARCHAR(15) NULL DEFAULT NULL,
  prestador_simples_nacional TINYINT UNSIGNED NULL DEFAULT NULL,
  tomador_documento VARCHAR(14) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  tomador_nif VARCHAR(40) NULL DEFAULT NULL,
  tomador_nome VARCHAR(300) NULL DEFAULT NULL,
  intermediario_documento VARCHAR(14) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  intermediario_nome VARCHAR(300) NULL DEFAULT NULL,
  serie_dps VARCHAR(5) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  numero_dps VARCHAR(15) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  codigo_tributacao_nacional VARCHAR(6) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  codigo_tributacao_municipal VARCHAR(3) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  codigo_nbs VARCHAR(9) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  descricao_servico TEXT NULL,
  valor_servico BIGINT NULL DEFAULT NULL,
  valor_base_calculo BIGINT NULL DEFAULT NULL,
  aliquota DECIMAL(7,4) NULL DEFAULT NULL,
  valor_issqn BIGINT NULL DEFAULT NULL,
  valor_total_retencoes BIGINT NULL DEFAULT NULL,
  valor_liquido BIGINT NULL DEFAULT NULL,
  tributacao_issqn TINYINT UNSIGNED NULL DEFAULT NULL,
  tipo_retencao_issqn TINYINT UNSIGNED NULL DEFAULT NULL,
  chave_substituida CHAR(50) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  situacao VARCHAR(24) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'ATIVA',
  chave_substituta CHAR(50) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  xml LONGBLOB NOT NULL,
  xml_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (id),
  UNIQUE KEY uq_chave (chave),
  UNIQUE KEY uq_feed_nsu (ambiente, tipo_nsu, nsu),
  KEY ix_data_emissao (data_emissao),
  KEY ix_competencia (competencia),
  KEY ix_prestador (prestador_documento, data_emissao),
  KEY ix_tomador (tomador_documento, data_emissao),
  KEY ix_chave_substituida (chave_substituida),
  KEY ix_situacao (situacao, data_emissao)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Template of nfse_eventos_{ibge}. id_evento is infEvento/@Id ("EVT" + chave + código + nSeqEvento, 62
-- chars); codigo is the 6-digit event code without the leading "e". Events may arrive before or without
-- their note, so chave is only an index, never a reference.
CREATE TABLE nfse_eventos_template (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  id_evento CHAR(62) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  chave CHAR(50) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  ambiente TINYINT UNSIGNED NOT NULL,
  tipo_nsu VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  nsu BIGINT UNSIGNED NOT NULL,
  versao VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  codigo CHAR(6) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  tipo_evento VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  sequencia SMALLINT UNSIGNED NULL DEFAULT NULL,
  ambiente_gerador TINYINT UNSIGNED NULL DEFAULT NULL,
  data_evento DATETIME NULL DEFAULT NULL,
  data_processamento DATETIME NULL DEFAULT NULL,
  data_geracao_adn DATETIME(3) NULL DEFAULT NULL,
  autor_documento VARCHAR(14) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  motivo_codigo VARCHAR(4) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  motivo_descricao VARCHAR(1000) NULL DEFAULT NULL,
  chave_substituta CHAR(50) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  xml LONGBLOB NOT NULL,
  xml_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (id),
  UNIQUE KEY uq_id_evento (id_evento),
  KEY ix_feed_nsu (ambiente, tipo_nsu, nsu),
  KEY ix_chave (chave, codigo),
  KEY ix_codigo (codigo, data_processamento),
  KEY ix_data_processamento (data_processamento)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
