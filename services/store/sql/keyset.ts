// Keyset ("seek") pagination: the WHERE predicate that continues after the last row of a page. Written
// as an OR chain rather than a row constructor because MySQL 5.6 cannot use an index for
// `(a, b) > (?, ?)`.
export interface KeyColumn {
  /** A column expression chosen by the query builder (never user input). */
  expr: string;
  desc?: boolean;
}

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

export function keysetAfter(columns: KeyColumn[], last: readonly unknown[]): SqlFragment {
  if (columns.length !== last.length || columns.length === 0) throw new Error("keyset: key and columns differ");
  const ors: string[] = [];
  const params: unknown[] = [];
  for (let i = 0; i < columns.length; i++) {
    const ands: string[] = [];
    for (let j = 0; j < i; j++) {
      ands.push(`${columns[j]!.expr} = ?`);
      params.push(last[j]);
    }
    ands.push(`${columns[i]!.expr} ${columns[i]!.desc ? "<" : ">"} ?`);
    params.push(last[i]);
    ors.push(ands.length === 1 ? ands[0]! : `(${ands.join(" AND ")})`);
  }
  return { sql: `(${ors.join(" OR ")})`, params };
}

export function orderBy(columns: KeyColumn[]): string {
  return columns.map((c) => `${c.expr} ${c.desc ? "DESC" : "ASC"}`).join(", ");
}

/** Builds a WHERE clause from optional conditions. */
export class Where {
  private readonly parts: string[] = [];
  readonly params: unknown[] = [];

  add(sql: string, ...params: unknown[]): this {
    this.parts.push(sql);
    this.params.push(...params);
    return this;
  }

  addFragment(f: SqlFragment): this {
    return this.add(f.sql, ...f.params);
  }

  get sql(): string {
    return this.parts.length ? `WHERE ${this.parts.join(" AND ")}` : "";
  }
}
