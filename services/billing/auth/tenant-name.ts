// What a tenant may be called: the one rule the RPCs, the tokens file and the CLI check names against.
export const TENANT_RULE = "1-64 of A-Z, a-z, 0-9, '.', '_' and '-'";

export const isTenantName = (t: string): boolean => /^[A-Za-z0-9._-]{1,64}$/.test(t) && !/^\.+$/.test(t);
