// The JSON columns of the billing tables (MySQL 5.6 has no JSON type: they are TEXT written by this
// service) read back into their typed documents. A field of the wrong type is a corrupt row, reported
// with the column and the field's path rather than passed on as an untyped value.

export class CorruptColumn extends Error {
  override name = "CorruptColumn";
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** One JSON object being read, with the path that names it in errors. */
export class Doc {
  private constructor(
    private readonly value: { [k: string]: Json },
    private readonly path: string,
  ) {}

  static parse(text: string, column: string): Doc {
    let v: Json;
    try {
      v = JSON.parse(text) as Json;
    } catch {
      throw new CorruptColumn(`${column} is not JSON`);
    }
    return Doc.of(v, column);
  }

  static of(v: Json | undefined, path: string): Doc {
    if (v === null || v === undefined || typeof v !== "object" || Array.isArray(v)) throw new CorruptColumn(`${path} is not an object`);
    return new Doc(v, path);
  }

  /** The elements of a JSON array column. */
  static list<T>(text: string, column: string, each: (d: Doc) => T): T[] {
    const v = JSON.parse(text) as Json;
    if (!Array.isArray(v)) throw new CorruptColumn(`${column} is not an array`);
    return v.map((e, i) => each(Doc.of(e, `${column}[${i}]`)));
  }

  has(k: string): boolean {
    return this.value[k] !== undefined && this.value[k] !== null;
  }

  str(k: string): string {
    const v = this.value[k];
    if (typeof v !== "string") throw this.bad(k, "a string");
    return v;
  }

  num(k: string): number {
    const v = this.value[k];
    if (typeof v !== "number") throw this.bad(k, "a number");
    return v;
  }

  bool(k: string): boolean {
    const v = this.value[k];
    if (typeof v !== "boolean") throw this.bad(k, "a boolean");
    return v;
  }

  optStr(k: string): string | undefined {
    return this.has(k) ? this.str(k) : undefined;
  }

  optNum(k: string): number | undefined {
    return this.has(k) ? this.num(k) : undefined;
  }

  doc(k: string): Doc {
    return Doc.of(this.value[k], `${this.path}.${k}`);
  }

  optDoc(k: string): Doc | undefined {
    return this.has(k) ? this.doc(k) : undefined;
  }

  list<T>(k: string, each: (d: Doc) => T): T[] {
    const v = this.value[k];
    if (!Array.isArray(v)) throw this.bad(k, "an array");
    return v.map((e, i) => each(Doc.of(e, `${this.path}.${k}[${i}]`)));
  }

  strings(k: string): string[] {
    const v = this.value[k];
    if (!Array.isArray(v) || v.some((e) => typeof e !== "string")) throw this.bad(k, "an array of strings");
    return v as string[];
  }

  private bad(k: string, what: string): CorruptColumn {
    return new CorruptColumn(`${this.path}.${k} is not ${what}`);
  }
}
