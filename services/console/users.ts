// Operators of the console, from a file an administrator keeps (CONSOLE_USERS_FILE), one per line:
//   <user> <role> <sha256 of the token, hex>     e.g.  maria operator 9f86d0…   (role: read-only, operator, admin)
// A "-" instead of the digest means the user can only come through the identity-aware proxy header.
// An optional fourth field scopes the billing views: `tenants=acme,beta`, or `tenants=*` for every tenant
// the console knows. Without it a user sees no billing tenant at all, whatever the role (fail closed).
// The file is re-read when it changes, so revoking someone needs no restart.
import { createHash, timingSafeEqual } from "node:crypto";
import { WatchedFile } from "../../libs/config/watched-file.js";
import { ROLES, type Role } from "./api-types.js";

export interface Operator {
  user: string;
  role: Role;
  /** SHA-256 of the sign-in token; absent for proxy-only users. */
  tokenDigest?: Buffer;
  /** The billing tenants this user may see and act for: "*" = every configured one; absent = none. */
  tenants?: "*" | readonly string[];
}

/** Letters, digits and . _ @ - : an e-mail address or a login, never something that needs quoting in a log. */
const USER = /^[A-Za-z0-9._@-]{1,128}$/;
const DIGEST = /^[0-9a-f]{64}$/;
/** The billing service's tenant rule (1-64 of A-Z a-z 0-9 . _ -, not only dots). */
export const TENANT = /^(?!\.+$)[A-Za-z0-9._-]{1,64}$/;

function parseTenants(field: string, where: string): "*" | string[] {
  const m = /^tenants=(.*)$/.exec(field);
  if (!m) throw new UsersFileError(`${where}: the fourth field must be tenants=<tenant>,<tenant>… or tenants=*`);
  if (m[1] === "*") return "*";
  const tenants = m[1]!.split(",");
  for (const t of tenants) if (!TENANT.test(t)) throw new UsersFileError(`${where}: tenant "${t}" must be 1-64 of A-Z a-z 0-9 . _ -`);
  return [...new Set(tenants)];
}

export class UsersFileError extends Error {}

export function parseUsers(text: string, source: string): Map<string, Operator> {
  const users = new Map<string, Operator>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const where = `${source} line ${i + 1}`;
    const fields = line.split(/\s+/);
    if (fields.length !== 3 && fields.length !== 4)
      throw new UsersFileError(`${where}: expected "<user> <role> <sha256 of token> [tenants=…]", found ${fields.length} fields`);
    const [user, role, digest, scope] = fields as [string, string, string, string | undefined];
    if (!USER.test(user)) throw new UsersFileError(`${where}: user must be 1-128 of A-Z a-z 0-9 . _ @ -`);
    if (!(ROLES as readonly string[]).includes(role))
      throw new UsersFileError(`${where}: role must be one of ${ROLES.join(", ")}, found "${role}"`);
    if (digest !== "-" && !DIGEST.test(digest))
      throw new UsersFileError(`${where}: token digest must be 64 lowercase hex digits (sha256sum) or "-"`);
    if (users.has(user)) throw new UsersFileError(`${where}: user "${user}" is listed twice`);
    users.set(user, {
      user,
      role: role as Role,
      ...(digest !== "-" ? { tokenDigest: Buffer.from(digest, "hex") } : {}),
      ...(scope !== undefined ? { tenants: parseTenants(scope, where) } : {}),
    });
  });
  return users;
}

export const tokenDigest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

/** The users file, re-read when it changes (checked on every sign-in and request); a broken edit keeps the last good list. */
export class OperatorDirectory {
  private readonly file: WatchedFile<Map<string, Operator>>;

  constructor(path: string, onReloadError: (err: Error) => void = () => undefined) {
    this.file = new WatchedFile(path, (text) => parseUsers(text, path), { checkMs: 0, onError: onReloadError });
  }

  get(user: string): Operator | undefined {
    return this.file.current().get(user);
  }

  /** The operator whose token this is, or undefined; compares digests in constant time. */
  authenticate(user: string, token: string): Operator | undefined {
    const op = this.get(user);
    if (!op?.tokenDigest || token.length === 0) return undefined;
    return timingSafeEqual(op.tokenDigest, tokenDigest(token)) ? op : undefined;
  }
}
