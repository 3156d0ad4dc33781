// `billing tokens new`: a tenant API token and the line that grants it in billing's tokens file
// (BILLING_TENANT_TOKENS_FILE). Made here, offline: the file holds only the token's SHA-256, so the
// token exists only in this output until it reaches the tenant.
import { newTenantToken, tokensFileLine } from "../services/billing/auth/tenant-auth.js";
import { isTenantName, TENANT_RULE } from "../services/billing/auth/tenant-name.js";
import { tenantOption } from "./billing-common.js";
import { str, type Command } from "./command.js";
import { UsageError } from "./exit-codes.js";
import { json } from "./format.js";
import { write } from "./io.js";

export const billingTokensNew: Command = {
  usage: "billing tokens new --tenant <tenant>",
  summary:
    "make an API token for a tenant and print it with the line to append to BILLING_TENANT_TOKENS_FILE (billing re-reads the file; delete the line to revoke)",
  options: tenantOption,
  positionals: [0, 0],
  async run(ctx) {
    const tenant = str(ctx.values, "tenant");
    if (!tenant || !isTenantName(tenant)) throw new UsageError(`--tenant must be ${TENANT_RULE}`);
    const token = newTenantToken();
    const line = tokensFileLine(tenant, token);
    if (ctx.json) return write(ctx.io.out, json({ tenant, token, tokensFileLine: line }));
    write(ctx.io.out, `token for ${tenant} (give it to the tenant; it is not stored anywhere): ${token}`);
    write(ctx.io.out, `append to BILLING_TENANT_TOKENS_FILE: ${line}`);
  },
};
