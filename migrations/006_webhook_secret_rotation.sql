-- 006: webhook secret rotation with a grace period (Standard Webhooks): after a rotation the previous
-- secret keeps signing beside the new one until previous_secret_until, so a receiver that has not yet
-- switched still verifies every delivery. NULL = no previous secret.

ALTER TABLE billing_webhook_endpoints
  ADD COLUMN previous_secret VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER secret,
  ADD COLUMN previous_secret_until DATETIME(3) NULL AFTER previous_secret;
