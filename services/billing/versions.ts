// What a job records it was produced with (seed 002). The bank-rule version is derived from the rule
// tables themselves, so it changes exactly when libs/cobranca's tables change.
import { createHash } from "node:crypto";
import { BANKS, CNAB240_PROFILES } from "../../libs/cobranca/index.js";

/** Bump when the ficha layout or the billing-side rendering inputs change. */
export const TEMPLATE_VERSION = "ficha-a4-v1";

export const BANK_RULES_VERSION = `bancos-${createHash("sha256")
  .update(JSON.stringify([BANKS, CNAB240_PROFILES]))
  .digest("hex")
  .slice(0, 12)}`;
