-- 005: billing jobs (services/billing). A job row and one row per item are written in one transaction
-- by the Create RPC; workers move them through their state machines with conditional UPDATEs, so a
-- redelivered queue message never redoes a finished step. Attempts are history: a retry adds a row.
--
-- Boleto items and remessa títulos share billing_boleto_items (a título is a boleto plus a movement
-- code); remessa títulos name their sub-batch. Codes and ids are validated by the service ([A-Za-z0-9._-]), hence ascii_bin; inputs, results and
-- errors are JSON documents the service reads back whole (MySQL 5.6 has no JSON type: MEDIUMTEXT).
-- Times are UTC with milliseconds.

CREATE TABLE billing_jobs (
  id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  tenant VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  kind TINYINT UNSIGNED NOT NULL,
  state TINYINT UNSIGNED NOT NULL,
  environment TINYINT UNSIGNED NOT NULL,
  idempotency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  requested_by VARCHAR(255) NOT NULL DEFAULT '',
  metadata MEDIUMTEXT NOT NULL,
  total_items INT UNSIGNED NOT NULL,
  retry_rounds INT UNSIGNED NOT NULL DEFAULT 0,
  manifest MEDIUMTEXT NULL,
  details MEDIUMTEXT NULL,
  duracao_ms BIGINT UNSIGNED NULL DEFAULT NULL,
  processed_items INT UNSIGNED NULL DEFAULT NULL,
  created_at DATETIME(3) NOT NULL,
  started_at DATETIME(3) NULL DEFAULT NULL,
  round_started_at DATETIME(3) NULL DEFAULT NULL,
  finished_at DATETIME(3) NULL DEFAULT NULL,
  updated_at DATETIME(3) NOT NULL,
  artifacts_expires_at DATETIME(3) NULL DEFAULT NULL,
  PRIMARY KEY (id),
  KEY ix_billing_jobs_tenant_created (tenant, created_at, id),
  KEY ix_billing_jobs_tenant_state (tenant, state)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row per (tenant, key): the primary key makes two concurrent identical creates collide, and the
-- loser reads the winner's job. request_sha256 covers the request without requested_by. Keys are up to
-- 255 characters of any script, too long for a utf8mb4 key part: the key is their SHA-256.
CREATE TABLE billing_idempotency_keys (
  tenant VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  key_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  idempotency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  request_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  job_id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (tenant, key_sha256)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE billing_boleto_items (
  job_id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  position INT UNSIGNED NOT NULL,
  item_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state TINYINT UNSIGNED NOT NULL,
  input MEDIUMTEXT NOT NULL,
  nosso_numero VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  sublote_index INT UNSIGNED NULL DEFAULT NULL,
  result MEDIUMTEXT NULL,
  errors MEDIUMTEXT NULL,
  attempt_count INT UNSIGNED NOT NULL DEFAULT 0,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (job_id, position),
  KEY ix_billing_boleto_items_id (job_id, item_id, position),
  KEY ix_billing_boleto_items_state (job_id, state, position)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- deliveries counts how many times a worker picked the attempt up (> 1: a crash or a timeout interrupted
-- it) and renders how many times its PDF was drawn. holder_seq is the stream sequence of the queue
-- message working on it and held_at its last heartbeat: a duplicate message leaves a live holder alone.
CREATE TABLE billing_item_attempts (
  job_id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  position INT UNSIGNED NOT NULL,
  number INT UNSIGNED NOT NULL,
  state TINYINT UNSIGNED NOT NULL,
  deliveries INT UNSIGNED NOT NULL DEFAULT 0,
  renders INT UNSIGNED NOT NULL DEFAULT 0,
  started_at DATETIME(3) NULL DEFAULT NULL,
  finished_at DATETIME(3) NULL DEFAULT NULL,
  holder_seq BIGINT UNSIGNED NULL DEFAULT NULL,
  held_at DATETIME(3) NULL DEFAULT NULL,
  errors MEDIUMTEXT NULL,
  result MEDIUMTEXT NULL,
  PRIMARY KEY (job_id, position, number)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Nosso número sequences per (tenant, environment, banco, convênio): a number is allocated in a
-- transaction, stored on the item before rendering and never handed out again.
CREATE TABLE billing_nosso_numero_seq (
  tenant VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  environment TINYINT UNSIGNED NOT NULL,
  banco CHAR(3) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  convenio VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  last_value BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (tenant, environment, banco, convenio)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The tenant's completion-webhook endpoint. The signing secret must be readable to sign, so it is
-- stored as issued; it is never returned after creation nor logged (secret_hint tells secrets apart).
CREATE TABLE billing_webhook_endpoints (
  tenant VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  url VARCHAR(2048) NOT NULL,
  event_types TEXT NOT NULL,
  enabled TINYINT(1) NOT NULL,
  secret VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (tenant)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The delivery log and outbox: a row is inserted in the transaction that moves a job to its final
-- state, one per (job, round) by the unique key, so a crash can never lose or double a completion
-- event. Senders claim a due row by moving next_attempt_at forward (a lease); a sender killed mid-send
-- leaves the row due again later, re-sent with the same id and body.
CREATE TABLE billing_webhook_deliveries (
  id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  tenant VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  job_id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  job_round INT UNSIGNED NOT NULL,
  event_type VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state TINYINT UNSIGNED NOT NULL,
  attempts INT UNSIGNED NOT NULL DEFAULT 0,
  attempt_limit INT UNSIGNED NOT NULL,
  last_http_status INT UNSIGNED NOT NULL DEFAULT 0,
  last_error VARCHAR(512) NOT NULL DEFAULT '',
  next_attempt_at DATETIME(3) NULL DEFAULT NULL,
  created_at DATETIME(3) NOT NULL,
  delivered_at DATETIME(3) NULL DEFAULT NULL,
  body MEDIUMTEXT NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_billing_webhook_deliveries_job (job_id, job_round),
  KEY ix_billing_webhook_deliveries_due (state, next_attempt_at),
  KEY ix_billing_webhook_deliveries_tenant (tenant, created_at, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Remessa sub-batches, computed at creation (deterministic grouping). The NSA and the generation time
-- are allocated once, in the transaction that stores them here, and reused by every retry: a
-- regenerated file is byte-identical, and an NSA is never handed out twice.
CREATE TABLE billing_remessa_sublotes (
  job_id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  idx INT UNSIGNED NOT NULL,
  sublote_id VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  sublote_key TEXT NOT NULL,
  state TINYINT UNSIGNED NOT NULL,
  titulos INT UNSIGNED NOT NULL,
  valor_total_cents BIGINT UNSIGNED NOT NULL,
  nsa INT UNSIGNED NULL DEFAULT NULL,
  generated_at DATETIME(3) NULL DEFAULT NULL,
  attempt_count INT UNSIGNED NOT NULL DEFAULT 0,
  errors MEDIUMTEXT NULL,
  file MEDIUMTEXT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (job_id, idx)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- NSA sequences per (tenant, environment, banco, convênio): sandbox never burns production numbers.
CREATE TABLE billing_nsa_seq (
  tenant VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  environment TINYINT UNSIGNED NOT NULL,
  banco CHAR(3) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  convenio VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  last_nsa INT UNSIGNED NOT NULL,
  PRIMARY KEY (tenant, environment, banco, convenio)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A retorno file is parsed once per tenant: its sha256 names the job that parsed it.
CREATE TABLE billing_retorno_files (
  tenant VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  file_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  job_id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  PRIMARY KEY (tenant, file_sha256)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Normalised occurrences, one per detail line. fingerprint is libs/cobranca's chaveIdempotencia; the
-- first job of the tenant that saw a fingerprint owns it, and later sightings are flagged duplicate.
CREATE TABLE billing_retorno_occurrences (
  job_id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  line_number INT UNSIGNED NOT NULL,
  state TINYINT UNSIGNED NOT NULL,
  nosso_numero VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  boleto_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  fingerprint_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  duplicate TINYINT(1) NOT NULL,
  body MEDIUMTEXT NOT NULL,
  PRIMARY KEY (job_id, line_number),
  KEY ix_billing_retorno_occurrences_state (job_id, state, line_number)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE billing_retorno_fingerprints (
  tenant VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  fingerprint_sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  job_id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  PRIMARY KEY (tenant, fingerprint_sha256)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
