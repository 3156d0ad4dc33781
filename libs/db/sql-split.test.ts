import { describe, expect, it } from "vitest";
import { SqlSplitError, splitSqlStatements } from "./sql-split.js";

const texts = (sql: string): string[] => splitSqlStatements(sql).map((s) => s.text);

describe("splitSqlStatements", () => {
  it("splits on semicolons and trims each statement", () => {
    expect(texts("CREATE TABLE a (id INT);\n  INSERT INTO a VALUES (1) ;\nSELECT 1")).toEqual([
      "CREATE TABLE a (id INT)",
      "INSERT INTO a VALUES (1)",
      "SELECT 1",
    ]);
  });

  it("drops empty statements and comment-only statements", () => {
    expect(texts(";;\n  ; -- nothing here\n/* nor; here */ ;\n# trailing; comment\n")).toEqual([]);
    expect(texts("SELECT 1;;\n-- the end;\n")).toEqual(["SELECT 1"]);
  });

  it("ignores semicolons in single, double and backtick quoting", () => {
    const sql = [
      "INSERT INTO t VALUES ('a;b', \"c;d\", 'it''s;', \"say \"\"hi;\"\"\", 'back\\';slash');",
      "SELECT `odd;name`, `with``tick;` FROM t;",
    ].join("\n");
    expect(texts(sql)).toEqual([
      "INSERT INTO t VALUES ('a;b', \"c;d\", 'it''s;', \"say \"\"hi;\"\"\", 'back\\';slash')",
      "SELECT `odd;name`, `with``tick;` FROM t",
    ]);
  });

  it("ignores semicolons in -- , # and /* */ comments but keeps comments inside a statement", () => {
    const sql = "CREATE TABLE t ( -- a; comment\n id INT # another; one\n /* block; */ );\nSELECT 2";
    expect(texts(sql)).toEqual(["CREATE TABLE t ( -- a; comment\n id INT # another; one\n /* block; */ )", "SELECT 2"]);
  });

  it("treats -- without a following space as operators, as MySQL does", () => {
    expect(texts("SELECT 5--1; SELECT 3")).toEqual(["SELECT 5--1", "SELECT 3"]);
  });

  it("reports the line where each statement starts, after leading comments", () => {
    const statements = splitSqlStatements("-- header\n\nCREATE TABLE a (\n id INT\n);\n\n/* x */ SELECT\n 1;");
    expect(statements.map((s) => s.line)).toEqual([3, 7]);
  });

  it("keeps a /*! executable comment with its statement", () => {
    expect(texts("/*!40101 SET NAMES utf8mb4 */;\nSELECT 1;")).toEqual(["/*!40101 SET NAMES utf8mb4 */", "SELECT 1"]);
  });

  it("refuses unterminated quotes and comments with the line they start on", () => {
    expect(() => splitSqlStatements("SELECT 1;\nSELECT 'oops;\n")).toThrow(SqlSplitError);
    expect(() => splitSqlStatements("SELECT 1;\nSELECT 'oops;\n")).toThrow(/line 2: unterminated string/);
    expect(() => splitSqlStatements("SELECT 1; /* never closed")).toThrow(/unterminated \/\* comment/);
    expect(() => splitSqlStatements("SELECT `x")).toThrow(/unterminated quoted identifier/);
  });

  it("refuses the client-side DELIMITER command", () => {
    expect(() => splitSqlStatements("DELIMITER $$\nCREATE TRIGGER x BEFORE INSERT ON t FOR EACH ROW BEGIN END$$")).toThrow(/DELIMITER/);
  });
});
