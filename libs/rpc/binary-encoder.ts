// protobuf-es serializes by reflection, into a writer that pushes each byte onto a JS array and each string
// into a chunk of its own: ≈ 31 µs of a store decode thread's ≈ 135 µs per document went to `toBinary` of
// the documento_pb / evento_pb columns. For a message made only of singular fields, this plans the fields
// once per schema and writes in two passes (sizes, then bytes into one buffer). Same bytes as `toBinary`
// (binary-encoder.test.ts compares them); anything the plan does not cover — lists, maps, oneofs, groups,
// floating point, fixed-width and zig-zag integers, proto2 required fields, unknown fields kept on the
// message, an int64 that is not a bigint — goes to `toBinary` itself (decision 0048).
import { type DescField, type DescMessage, type MessageShape, ScalarType, toBinary } from "@bufbuild/protobuf";
import { bigVarintSize, varintSize, writeBigVarint, writeVarint } from "./varint.js";

type Kind = "string" | "bytes" | "bool" | "int32" | "uint32" | "int64" | "uint64" | "enum" | "message";

interface FieldPlan {
  name: string;
  kind: Kind;
  /** The field's tag, as varint bytes. */
  tag: Uint8Array;
  /** Explicit presence: set when the property is own and defined; implicit: when not the zero value. */
  explicit: boolean;
  message?: MessagePlan;
}

interface MessagePlan {
  fields: FieldPlan[];
}

/** Raised inside a pass when a value is outside the plan; the caller then serializes with `toBinary`. */
class NotPlanned extends Error {}

const IMPLICIT = 2;
const MAX_UINT64 = (1n << 64n) - 1n;
const MIN_INT64 = -(1n << 63n);
const MAX_INT64 = (1n << 63n) - 1n;

const SCALAR_KINDS = new Map<ScalarType, Kind>([
  [ScalarType.STRING, "string"],
  [ScalarType.BYTES, "bytes"],
  [ScalarType.BOOL, "bool"],
  [ScalarType.INT32, "int32"],
  [ScalarType.UINT32, "uint32"],
  [ScalarType.INT64, "int64"],
  [ScalarType.UINT64, "uint64"],
]);

function varintBytes(n: number): Uint8Array {
  const out = new Uint8Array(varintSize(n));
  writeVarint(out, 0, n);
  return out;
}

function fieldKind(f: DescField): Kind | undefined {
  if (f.oneof) return undefined;
  if (f.fieldKind === "enum") return "enum";
  if (f.fieldKind === "message") return f.delimitedEncoding ? undefined : "message";
  if (f.fieldKind === "scalar") return SCALAR_KINDS.get(f.scalar);
  return undefined;
}

function plan(desc: DescMessage, seen: Map<DescMessage, MessagePlan | null>): MessagePlan | null {
  if (seen.has(desc)) return seen.get(desc) ?? null;
  const out: MessagePlan = { fields: [] };
  // A message that refers to itself is planned once; its nested use finds the plan being built.
  seen.set(desc, out);
  for (const f of [...desc.fields].sort((a, b) => a.number - b.number)) {
    const kind = fieldKind(f);
    // LEGACY_REQUIRED (3) makes toBinary throw for an unset field: left to it.
    if (kind === undefined || f.presence === 3) {
      seen.set(desc, null);
      return null;
    }
    const wire = kind === "string" || kind === "bytes" || kind === "message" ? 2 : 0;
    const field: FieldPlan = {
      name: f.localName,
      kind,
      tag: varintBytes(((f.number << 3) | wire) >>> 0),
      explicit: f.presence !== IMPLICIT,
    };
    if (kind === "message") {
      const nested = plan(f.message!, seen);
      if (nested === null) {
        seen.set(desc, null);
        return null;
      }
      field.message = nested;
    }
    out.fields.push(field);
  }
  return out;
}

type Values = Record<string, unknown>;

/**
 * The UTF-8 length of a string: counted here while it is ASCII (most of a document's fields are short
 * codes and names, and a call into Buffer per string cost more than the counting), by Buffer otherwise.
 */
function utf8Length(s: string): number {
  const n = s.length;
  if (n > 64) return Buffer.byteLength(s, "utf8");
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s, "utf8");
  return n;
}

function isSet(msg: Values, f: FieldPlan): boolean {
  const v = msg[f.name];
  if (f.explicit) return v !== undefined && Object.hasOwn(msg, f.name);
  switch (f.kind) {
    case "string":
      return v !== "";
    case "bytes":
      return !(v instanceof Uint8Array && v.byteLength === 0);
    case "bool":
      return v !== false;
    default:
      // Loose, as protobuf-es's zero check: 0, 0n and "0".
      // biome-ignore lint/suspicious/noDoubleEquals: the library's own comparison, kept for the same bytes
      return v != 0;
  }
}

function int32Value(v: unknown, unsigned: boolean): number {
  if (typeof v !== "number" || !Number.isInteger(v)) throw new NotPlanned();
  if (unsigned ? v < 0 || v > 0xffffffff : v < -0x80000000 || v > 0x7fffffff) throw new NotPlanned();
  return v;
}

function int64Value(v: unknown, unsigned: boolean): bigint {
  if (typeof v !== "bigint") throw new NotPlanned();
  if (unsigned ? v < 0n || v > MAX_UINT64 : v < MIN_INT64 || v > MAX_INT64) throw new NotPlanned();
  return BigInt.asUintN(64, v);
}

/**
 * First pass: the message's size. `lengths` gets each nested message's length in the order the second pass
 * meets them, and each string's UTF-8 length likewise.
 */
function sizeOf(msg: Values, p: MessagePlan, lengths: number[]): number {
  if ((msg as { $unknown?: unknown[] }).$unknown?.length) throw new NotPlanned();
  let size = 0;
  for (const f of p.fields) {
    if (!isSet(msg, f)) continue;
    const v = msg[f.name];
    size += f.tag.length;
    switch (f.kind) {
      case "string": {
        if (typeof v !== "string") throw new NotPlanned();
        const n = utf8Length(v);
        lengths.push(n);
        size += varintSize(n) + n;
        break;
      }
      case "bytes": {
        if (!(v instanceof Uint8Array)) throw new NotPlanned();
        size += varintSize(v.byteLength) + v.byteLength;
        break;
      }
      case "bool":
        size += 1;
        break;
      case "uint32":
        size += varintSize(int32Value(v, true));
        break;
      case "int32":
      case "enum": {
        const n = int32Value(v, false);
        // A negative int32 is written sign-extended to ten bytes.
        size += n < 0 ? 10 : varintSize(n);
        break;
      }
      case "int64":
      case "uint64":
        size += bigVarintSize(int64Value(v, f.kind === "uint64"));
        break;
      case "message": {
        if (typeof v !== "object" || v === null) throw new NotPlanned();
        const at = lengths.length;
        lengths.push(0);
        const n = sizeOf(v as Values, f.message!, lengths);
        lengths[at] = n;
        size += varintSize(n) + n;
        break;
      }
    }
  }
  return size;
}

class Out {
  pos = 0;
  next = 0;
  constructor(
    readonly buf: Buffer,
    readonly lengths: number[],
  ) {}

  varint(n: number): void {
    this.pos = writeVarint(this.buf, this.pos, n);
  }

  bigVarint(n: bigint): void {
    this.pos = writeBigVarint(this.buf, this.pos, n);
  }
}

function write(msg: Values, p: MessagePlan, out: Out): void {
  const buf = out.buf;
  for (const f of p.fields) {
    if (!isSet(msg, f)) continue;
    const v = msg[f.name];
    buf.set(f.tag, out.pos);
    out.pos += f.tag.length;
    switch (f.kind) {
      case "string": {
        const text = v as string;
        const n = out.lengths[out.next++]!;
        out.varint(n);
        if (n === text.length) {
          // ASCII (its UTF-8 length is its length): one byte per character.
          for (let i = 0; i < n; i++) buf[out.pos + i] = text.charCodeAt(i);
          out.pos += n;
        } else out.pos += buf.write(text, out.pos, n, "utf8");
        break;
      }
      case "bytes": {
        const bytes = v as Uint8Array;
        out.varint(bytes.byteLength);
        buf.set(bytes, out.pos);
        out.pos += bytes.byteLength;
        break;
      }
      case "bool":
        buf[out.pos++] = v ? 1 : 0;
        break;
      case "uint32":
        out.varint(v as number);
        break;
      case "int32":
      case "enum": {
        const n = v as number;
        if (n >= 0) out.varint(n);
        else out.bigVarint(BigInt.asUintN(64, BigInt(n)));
        break;
      }
      case "int64":
      case "uint64":
        out.bigVarint(BigInt.asUintN(64, v as bigint));
        break;
      case "message": {
        out.varint(out.lengths[out.next++]!);
        write(v as Values, f.message!, out);
        break;
      }
    }
  }
}

export type BinaryEncoder<Desc extends DescMessage> = (message: MessageShape<Desc>) => Uint8Array;

/** `toBinary` for one schema: planned when the schema allows it, `toBinary` itself otherwise. */
export function binaryEncoder<Desc extends DescMessage>(schema: Desc): BinaryEncoder<Desc> {
  const p = plan(schema, new Map());
  const fallback = (message: MessageShape<Desc>) => toBinary(schema, message);
  if (p === null) return fallback;
  return (message) => {
    const lengths: number[] = [];
    let size: number;
    try {
      size = sizeOf(message as unknown as Values, p, lengths);
    } catch (err) {
      if (err instanceof NotPlanned) return fallback(message);
      throw err;
    }
    const out = new Out(Buffer.allocUnsafeSlow(size), lengths);
    write(message as unknown as Values, p, out);
    return out.buf;
  };
}
