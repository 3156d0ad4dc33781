import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkSql56, formatFinding } from "./check.js";
import type { Sql56Finding } from "./check.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const fixture = (name: string): string => readFileSync(`${root}/test/fixtures/sql56/${name}`, "utf8");

const check = (...texts: string[]): Sql56Finding[] => checkSql56(texts.map((text, i) => ({ path: `f${i + 1}.sql`, text })));
const rules = (...texts: string[]): string[] => check(...texts).map((f) => f.rule);

const table = (columns: string, options = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"): string =>
  `CREATE TABLE t (\n  id INT NOT NULL,\n${columns},\n  PRIMARY KEY (id)\n) ${options};`;

describe("checkSql56 fixtures", () => {
  it("flags bad.sql with exactly a JSON column, an over-long indexed utf8mb4 VARCHAR(255) and a CTE", () => {
    const findings = checkSql56([{ path: "test/fixtures/sql56/bad.sql", text: fixture("bad.sql") }]);
    expect(findings.map((f) => [f.line, f.rule])).toEqual([
      [5, "json"],
      [8, "index-length"],
      [11, "cte"],
    ]);
    expect(formatFinding(findings[1] as Sql56Finding)).toMatch(
      /^test\/fixtures\/sql56\/bad\.sql:8: index-length: index bad_payloads\.uq_bad_payloads_email: column email VARCHAR\(255\) utf8mb4 takes 1020 bytes > 767/,
    );
  });

  it("passes good.sql, which is full of near misses", () => {
    expect(check(fixture("good.sql"))).toEqual([]);
  });

  it("passes every file in migrations/, checked in order", () => {
    const dir = `${root}/migrations`;
    const files = readdirSync(dir)
      .filter((n) => n.endsWith(".sql"))
      .sort();
    expect(files.length).toBeGreaterThan(0);
    const findings = checkSql56(files.map((n) => ({ path: `migrations/${n}`, text: readFileSync(`${dir}/${n}`, "utf8") })));
    expect(findings.map(formatFinding)).toEqual([]);
  });
});

describe("checkSql56 rules", () => {
  it("json: the column type, JSON_* functions, CAST AS JSON and -> operators, not look-alike names", () => {
    expect(rules(table("  payload JSON NULL"))).toEqual(["json"]);
    expect(rules("SELECT JSON_EXTRACT(doc, '$.a') FROM t;")).toEqual(["json"]);
    expect(rules("SELECT CAST(doc AS JSON), doc->'$.a', doc->>'$.b' FROM t;")).toEqual(["json", "json", "json"]);
    expect(rules(table("  json_payload MEDIUMTEXT NULL COMMENT 'JSON'"))).toEqual([]);
    expect(rules("SELECT json_payload, json_count FROM t WHERE note = 'JSON_EXTRACT(x)';")).toEqual([]);
  });

  it("generated-column: AS (…), GENERATED ALWAYS, VIRTUAL/STORED, not columns named like them", () => {
    expect(rules(table("  total INT AS (id * 2) VIRTUAL"))).toEqual(["generated-column"]);
    expect(rules(table("  total INT GENERATED ALWAYS AS (id * 2) STORED"))).toEqual(["generated-column"]);
    expect(rules("ALTER TABLE t ADD COLUMN total INT AS (id + 1) PERSISTENT;")).toEqual(["generated-column"]);
    expect(rules(table("  stored_at DATETIME NULL,\n  virtual_id INT NULL,\n  generated_by VARCHAR(10) NULL"))).toEqual([]);
  });

  it("cte: WITH … AS ( at statement start or in a subquery, incl. RECURSIVE; not in comments, strings or ROLLUP", () => {
    expect(rules("WITH x AS (SELECT 1) SELECT * FROM x;")).toEqual(["cte"]);
    expect(rules("WITH RECURSIVE n (v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < 5) SELECT v FROM n;")).toEqual(["cte"]);
    expect(rules("SELECT * FROM (WITH y AS (SELECT 2) SELECT * FROM y) z;")).toEqual(["cte"]);
    expect(rules("-- with x as (select 1)\nSELECT 'with x as (select 1)' FROM t /* WITH y AS ( */;")).toEqual([]);
    expect(rules("SELECT a, COUNT(*) FROM t GROUP BY a WITH ROLLUP;")).toEqual([]);
    expect(rules("START TRANSACTION WITH CONSISTENT SNAPSHOT;")).toEqual([]);
  });

  it("window-function: OVER ( and OVER name, WINDOW clauses; not aliases or columns named over*", () => {
    expect(rules("SELECT ROW_NUMBER() OVER (ORDER BY id) FROM t;")).toEqual(["window-function"]);
    expect(rules("SELECT SUM(a) OVER w FROM t WINDOW w AS (PARTITION BY b);")).toEqual(["window-function", "window-function"]);
    expect(rules("SELECT overdue, 1 AS over_count FROM t;")).toEqual([]);
    expect(rules(table("  overdue TINYINT NULL"))).toEqual([]);
  });

  it("returning: in INSERT/REPLACE/DELETE, not in names", () => {
    expect(rules("INSERT INTO t (a) VALUES (1) RETURNING id;")).toEqual(["returning"]);
    expect(rules("DELETE FROM t WHERE a = 1 RETURNING id;")).toEqual(["returning"]);
    expect(rules("SELECT returning_at FROM t;")).toEqual([]);
  });

  it("expression-default: DEFAULT (expr) and DEFAULT fn(), not CURRENT_TIMESTAMP(3), NOW() or literals", () => {
    expect(rules(table("  token CHAR(36) NOT NULL DEFAULT (UUID())"))).toEqual(["expression-default"]);
    expect(rules(table("  token CHAR(36) NOT NULL DEFAULT UUID()"))).toEqual(["expression-default"]);
    expect(
      rules(
        table(
          "  a DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),\n  b DATETIME NULL DEFAULT NOW(),\n  c VARCHAR(9) NOT NULL DEFAULT 'f(x)'",
        ),
      ),
    ).toEqual([]);
  });

  it("sequence: CREATE SEQUENCE, NEXTVAL(), NEXT VALUE FOR; not names containing sequence", () => {
    expect(rules("CREATE SEQUENCE s START WITH 1;")).toEqual(["sequence"]);
    expect(rules("SELECT NEXTVAL(s), NEXT VALUE FOR s;")).toEqual(["sequence", "sequence"]);
    expect(rules(table("  sequence_no INT NOT NULL"))).toEqual([]);
    expect(rules("CREATE TABLE sequence_log (id INT NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;")).toEqual([]);
  });

  it("if-exists: on columns and indexes, not on CREATE/DROP TABLE", () => {
    expect(rules("ALTER TABLE t ADD COLUMN IF NOT EXISTS a INT NULL;")).toEqual(["if-exists"]);
    expect(rules("ALTER TABLE t DROP INDEX IF EXISTS ix_a;")).toEqual(["if-exists"]);
    expect(rules("CREATE INDEX IF NOT EXISTS ix_a ON t (a);")).toEqual(["if-exists"]);
    expect(rules("CREATE TABLE IF NOT EXISTS t2 (id INT NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;\nDROP TABLE IF EXISTS t2;")).toEqual([]);
  });

  it("rename-column: RENAME COLUMN, not CHANGE or RENAME TABLE", () => {
    expect(rules("ALTER TABLE t RENAME COLUMN a TO b;")).toEqual(["rename-column"]);
    expect(rules("ALTER TABLE t CHANGE a b INT NOT NULL;\nRENAME TABLE t TO t_old;\nALTER TABLE t_old RENAME TO t;")).toEqual([]);
  });

  it("check-constraint: CHECK (…) inline or named, not a column called check_* or CHECK TABLE", () => {
    expect(rules(table("  qty INT NOT NULL CHECK (qty > 0)"))).toEqual(["check-constraint"]);
    expect(rules(table("  qty INT NOT NULL,\n  CONSTRAINT ck_qty CHECK (qty > 0)"))).toEqual(["check-constraint"]);
    expect(rules(table("  check_status INT NOT NULL") + "\nCHECK TABLE t;")).toEqual([]);
  });

  it("collation: rejects 0900, uca1400 and others; accepts unicode_ci, bin, ascii, latin1, binary", () => {
    expect(rules(table("  a VARCHAR(10) NULL", "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"))).toEqual(["collation"]);
    expect(rules(table("  a VARCHAR(10) COLLATE utf8mb4_uca1400_ai_ci NULL"))).toEqual(["collation"]);
    expect(rules(table("  a VARCHAR(10) COLLATE utf8mb4_general_ci NULL"))).toEqual(["collation"]);
    expect(
      rules(
        table(
          "  a VARCHAR(10) COLLATE utf8mb4_bin NULL,\n  b CHAR(2) CHARACTER SET ascii COLLATE ascii_bin NULL,\n" +
            "  c VARCHAR(9) CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL,\n  d VARBINARY(9) NULL",
        ),
      ),
    ).toEqual([]);
  });

  it("charset: utf8/utf8mb3 discouraged, exotic ones refused, utf8mb4/ascii/latin1/binary fine", () => {
    expect(rules(table("  a VARCHAR(10) NULL", "ENGINE=InnoDB DEFAULT CHARSET=utf8"))).toEqual(["charset"]);
    expect(rules(table("  a VARCHAR(10) CHARACTER SET utf8mb3 NULL"))).toEqual(["charset"]);
    expect(rules("SET NAMES utf8;")).toEqual(["charset"]);
    expect(rules(table("  a VARCHAR(10) CHARACTER SET ucs2 NULL"))).toEqual(["charset"]);
    expect(rules("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci;")).toEqual([]);
  });

  it("timestamp-default: TIMESTAMP needs both NULL/NOT NULL and DEFAULT; DATETIME is free", () => {
    expect(rules(table("  ts TIMESTAMP"))).toEqual(["timestamp-default"]);
    expect(rules(table("  ts TIMESTAMP NOT NULL"))).toEqual(["timestamp-default"]);
    expect(rules(table("  ts TIMESTAMP DEFAULT CURRENT_TIMESTAMP"))).toEqual(["timestamp-default"]);
    expect(
      rules(table("  ts TIMESTAMP NULL DEFAULT NULL,\n  tu TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),\n  dt DATETIME")),
    ).toEqual([]);
  });

  it("odku-row-alias: VALUES … AS new ON DUPLICATE KEY, not VALUES(col) or INSERT … SELECT … AS alias", () => {
    expect(rules("INSERT INTO t (a) VALUES (1) AS new ON DUPLICATE KEY UPDATE a = new.a;")).toEqual(["odku-row-alias"]);
    expect(rules("INSERT INTO t (a) VALUES (1) AS new (x) ON DUPLICATE KEY UPDATE a = x;")).toEqual(["odku-row-alias"]);
    expect(rules("INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), a = VALUES(a);")).toEqual([]);
    expect(rules("INSERT INTO t (a) SELECT s.a FROM s AS src ON DUPLICATE KEY UPDATE a = src.a;")).toEqual([]);
  });

  it("engine: anything but InnoDB", () => {
    expect(rules(table("  a INT NULL", "ENGINE=MyISAM"))).toEqual(["engine"]);
    expect(rules("ALTER TABLE t ENGINE = MEMORY;")).toEqual(["engine"]);
    expect(rules(table("  a INT NULL", "engine = innodb"))).toEqual([]);
  });

  it("reports comment- and string-spanning line numbers exactly", () => {
    const sql = "-- one\n/* two\nthree */ SELECT 'four\nfive';\nSELECT\n  JSON_OBJECT('a', 1);";
    expect(check(sql).map((f) => f.line)).toEqual([6]);
  });

  it("reports an unterminated string as a syntax finding instead of guessing", () => {
    expect(rules("SELECT 1;\nSELECT 'never closed;")).toEqual(["syntax"]);
  });
});

describe("checkSql56 index lengths", () => {
  it("utf8mb4: VARCHAR(191) fits in 767 bytes, VARCHAR(192) and VARCHAR(255) do not", () => {
    expect(rules(table("  a VARCHAR(191) NOT NULL,\n  UNIQUE KEY uq_a (a)"))).toEqual([]);
    expect(rules(table("  a VARCHAR(192) NOT NULL,\n  UNIQUE KEY uq_a (a)"))).toEqual(["index-length"]);
    expect(rules(table("  a VARCHAR(255) NOT NULL,\n  KEY ix_a (a)"))).toEqual(["index-length"]);
  });

  it("a prefix (191) makes VARCHAR(255) fit; a prefix longer than the column is an error", () => {
    expect(rules(table("  a VARCHAR(255) NOT NULL,\n  KEY ix_a (a(191))"))).toEqual([]);
    expect(rules(table("  a VARCHAR(100) NOT NULL,\n  KEY ix_a (a(150))"))).toEqual(["index-length"]);
  });

  it("counts bytes by charset: column, table default, collation-implied, ascii and binary", () => {
    expect(rules(table("  a VARCHAR(255) CHARACTER SET ascii NOT NULL,\n  KEY ix_a (a)"))).toEqual([]);
    expect(rules(table("  a VARCHAR(700) COLLATE latin1_bin NOT NULL,\n  KEY ix_a (a)"))).toEqual([]);
    expect(rules(table("  a VARBINARY(767) NOT NULL,\n  KEY ix_a (a)"))).toEqual([]);
    expect(rules(table("  a VARCHAR(255) NOT NULL,\n  KEY ix_a (a)", "ENGINE=InnoDB DEFAULT CHARSET=latin1"))).toEqual([]);
    // utf8 (3 bytes): 255 × 3 = 765 fits, 256 × 3 = 768 does not (plus the charset finding).
    expect(rules(table("  a VARCHAR(255) CHARACTER SET utf8mb3 NOT NULL,\n  KEY ix_a (a)"))).toEqual(["charset"]);
    expect(rules(table("  a VARCHAR(256) CHARACTER SET utf8mb3 NOT NULL,\n  KEY ix_a (a)"))).toEqual(["charset", "index-length"]);
    // No charset anywhere: the project default utf8mb4 is assumed.
    expect(rules(table("  a VARCHAR(255) NOT NULL,\n  KEY ix_a (a)", "ENGINE=InnoDB"))).toEqual(["index-length"]);
  });

  it("inline UNIQUE / PRIMARY KEY count too, and TEXT needs a prefix", () => {
    expect(rules("CREATE TABLE u (email VARCHAR(255) NOT NULL UNIQUE) ENGINE=InnoDB;")).toEqual(["index-length"]);
    expect(rules("CREATE TABLE u (code VARCHAR(200) NOT NULL PRIMARY KEY) ENGINE=InnoDB;")).toEqual(["index-length"]);
    expect(rules(table("  body TEXT NULL,\n  KEY ix_body (body)"))).toEqual(["index-length"]);
    expect(rules(table("  body TEXT NULL,\n  KEY ix_body (body(191))"))).toEqual([]);
  });

  it("a composite key over 3072 bytes is refused even when each part fits", () => {
    const cols = [1, 2, 3, 4, 5].map((n) => `  c${n} VARCHAR(191) NOT NULL`).join(",\n");
    expect(rules(table(`${cols},\n  KEY ix_all (c1, c2, c3, c4, c5)`))).toEqual(["index-length"]);
    expect(rules(table(`${cols},\n  KEY ix_four (c1, c2, c3, c4)`))).toEqual([]);
  });

  it("measures CREATE INDEX and ALTER TABLE ADD KEY against tables from earlier files, incl. LIKE copies", () => {
    const base = table("  a VARCHAR(255) NOT NULL,\n  b VARCHAR(191) NOT NULL");
    const findings = check(
      base,
      "CREATE TABLE t_copy LIKE t;\n\nCREATE INDEX ix_a ON t_copy (a);\nALTER TABLE t ADD UNIQUE KEY uq_b (b), ADD KEY ix_a (a);",
    );
    expect(findings.map((f) => [f.file, f.line, f.rule])).toEqual([
      ["f2.sql", 3, "index-length"],
      ["f2.sql", 4, "index-length"],
    ]);
    expect(findings[1]?.message).toMatch(/index t\.ix_a/);
  });

  it("follows MODIFY, CHANGE, DROP and RENAME so later checks see the current columns", () => {
    const base = table("  a VARCHAR(191) NOT NULL,\n  KEY ix_a (a)");
    expect(rules(base, "ALTER TABLE t MODIFY a VARCHAR(255) NOT NULL;")).toEqual(["index-length"]);
    expect(rules(base, "ALTER TABLE t CHANGE a a2 VARCHAR(250) NOT NULL;")).toEqual(["index-length"]);
    expect(rules(base, "ALTER TABLE t CHANGE a a2 VARCHAR(100) NOT NULL;\nCREATE INDEX ix_a2 ON t (a2);")).toEqual([]);
    expect(rules(base, "ALTER TABLE t DROP COLUMN a;\nCREATE INDEX ix_gone ON t (a);")).toEqual(["index-column"]);
    expect(rules(base, "RENAME TABLE t TO t2;\nALTER TABLE t2 MODIFY a VARCHAR(300) NOT NULL;")).toEqual(["index-length"]);
    expect(rules(base, "ALTER TABLE t CONVERT TO CHARACTER SET latin1;\nALTER TABLE t MODIFY a VARCHAR(700) NOT NULL;")).toEqual([]);
  });

  it("skips indexes on tables it never saw, and names unknown columns of known ones", () => {
    expect(rules("CREATE INDEX ix_x ON somewhere_else (x);\nALTER TABLE elsewhere ADD KEY ix_y (y);")).toEqual([]);
    expect(rules(table("  a INT NULL,\n  KEY ix_typo (a_typo)"))).toEqual(["index-column"]);
  });
});

describe("checkSql56 row size", () => {
  it("refuses a table whose worst-case COMPACT row exceeds 8126 bytes, also when an ALTER gets it there", () => {
    const names = (n: number): string => Array.from({ length: n }, (_, i) => `  name${i} VARCHAR(300) NULL`).join(",\n");
    expect(rules(table(names(10)))).toEqual([]);
    expect(rules(table(names(11)))).toEqual(["row-size"]);
    const adds = Array.from({ length: 4 }, (_, i) => `ADD COLUMN extra${i} VARCHAR(300) NULL`).join(", ");
    expect(rules(table(names(8)), `ALTER TABLE t ${adds};`)).toEqual(["row-size"]);
    // ascii codes cost a quarter of utf8mb4.
    expect(rules(table(Array.from({ length: 40 }, (_, i) => `  code${i} CHAR(50) CHARACTER SET ascii NULL`).join(",\n")))).toEqual([]);
  });
});
