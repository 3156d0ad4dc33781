import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DocumentSchema, DocumentStatus } from "../../../libs/gen/malha/nfse/v1/document_pb.js";
import { EventSchema } from "../../../libs/gen/malha/nfse/v1/event_pb.js";
import { FaultReason } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { chaveOf, docItem, eventItem, faultItem } from "../testing/fixtures.js";
import { aliquotaPercent, asciiCode, text, toSqlDate } from "./columns.js";
import {
  DOCUMENT_COLUMNS,
  EVENT_COLUMNS,
  itemRow,
  QUARANTINE_COLUMNS,
  type DocumentRow,
  type Mapped,
  type QuarantineRow,
} from "./item-rows.js";

const feed = { ibge: "3550308", ambiente: 1, tipoNsu: "DISTRIBUICAO" };
const col = (cols: readonly string[], values: unknown[], name: string) => values[cols.indexOf(name)];

describe("itemRow", () => {
  it("maps a document to its index columns, keeping the XML byte-exact and the typed note", () => {
    const item = docItem(7, 1);
    const row = itemRow(feed, item, "1") as Mapped<DocumentRow>;
    expect(row.kind).toBe("document");
    expect(row.values).toHaveLength(DOCUMENT_COLUMNS.length);
    expect(col(DOCUMENT_COLUMNS, row.values, "nsu")).toBe("7");
    expect(col(DOCUMENT_COLUMNS, row.values, "prestador_documento")).toBe("11222333000181");
    expect(col(DOCUMENT_COLUMNS, row.values, "tomador_documento")).toBe("12345678909");
    expect(col(DOCUMENT_COLUMNS, row.values, "competencia")).toBe("2025-03-01");
    expect(col(DOCUMENT_COLUMNS, row.values, "aliquota")).toBe("2.0000");
    expect(col(DOCUMENT_COLUMNS, row.values, "valor_servico")).toBe("100000");
    expect((col(DOCUMENT_COLUMNS, row.values, "xml") as Buffer).equals(Buffer.from(item.xml))).toBe(true);
    expect(col(DOCUMENT_COLUMNS, row.values, "xml_sha256")).toBe(item.xmlSha256);
    const typed = fromBinary(DocumentSchema, col(DOCUMENT_COLUMNS, row.values, "documento_pb") as Buffer);
    expect(typed.chave).toBe(chaveOf(1));
  });

  it("serializes the decoded document and event as they are, and a document claiming the store's derived fields without them", () => {
    const item = docItem(7, 1);
    if (item.content.case !== "document") throw new Error("fixture");
    const plain = col(DOCUMENT_COLUMNS, itemRow(feed, item, "1").values, "documento_pb") as Buffer;
    expect(plain.equals(toBinary(DocumentSchema, item.content.value))).toBe(true);

    // A sender may not set status or chave_substituta: the row gets the content serialized without them.
    item.content.value.status = DocumentStatus.CANCELADA;
    item.content.value.chaveSubstituta = chaveOf(2);
    const cleaned = col(DOCUMENT_COLUMNS, itemRow(feed, item, "1").values, "documento_pb") as Buffer;
    expect(cleaned.equals(plain)).toBe(true);
    expect(fromBinary(DocumentSchema, cleaned)).toMatchObject({
      chave: chaveOf(1),
      status: DocumentStatus.UNSPECIFIED,
      chaveSubstituta: "",
    });
    // The decoded message itself is left as it was.
    expect(item.content.value.status).toBe(DocumentStatus.CANCELADA);

    const ev = eventItem(9, chaveOf(1), "101101");
    if (ev.content.case !== "event") throw new Error("fixture");
    const evPb = col(EVENT_COLUMNS, itemRow(feed, ev, "1").values, "evento_pb") as Buffer;
    expect(evPb.equals(toBinary(EventSchema, ev.content.value))).toBe(true);
  });

  it("maps an event", () => {
    const row = itemRow(feed, eventItem(9, chaveOf(1), "105102", { chaveSubstituta: chaveOf(2) }), "1");
    expect(row.kind).toBe("event");
    if (row.kind !== "event") return;
    expect(row.values).toHaveLength(EVENT_COLUMNS.length);
    expect(row).toMatchObject({ codigo: "105102", chaveSubstituta: chaveOf(2), nsu: 9n });
  });

  it("quarantines faults with their raw payload, and items the tables cannot key", () => {
    const fault = itemRow(feed, faultItem(3, Buffer.from("raw!"), FaultReason.BAD_BASE64), "5") as QuarantineRow;
    expect(fault.kind).toBe("fault");
    expect(fault.values).toHaveLength(QUARANTINE_COLUMNS.length);
    expect((col(QUARANTINE_COLUMNS, fault.values, "payload") as Buffer).toString()).toBe("raw!");
    expect(col(QUARANTINE_COLUMNS, fault.values, "reason")).toBe("BAD_BASE64");
    expect(col(QUARANTINE_COLUMNS, fault.values, "item_key")).toBe("");

    const noNsu = itemRow(feed, faultItem(0, Buffer.from("a")), "5") as QuarantineRow;
    const noNsu2 = itemRow(feed, faultItem(0, Buffer.from("b")), "5") as QuarantineRow;
    expect(col(QUARANTINE_COLUMNS, noNsu.values, "item_key")).toHaveLength(64);
    expect(col(QUARANTINE_COLUMNS, noNsu.values, "item_key")).not.toBe(col(QUARANTINE_COLUMNS, noNsu2.values, "item_key"));

    const badChave = docItem(4, 1);
    if (badChave.content.case === "document") badChave.content.value.chave = "123";
    expect(itemRow(feed, badChave, "5")).toMatchObject({ kind: "fault" });
    const badSha = docItem(4, 1);
    badSha.xmlSha256 = "0".repeat(64);
    expect(itemRow(feed, badSha, "5")).toMatchObject({ kind: "fault" });
  });

  it("converts column values without ever producing something strict mode would reject", () => {
    expect(asciiCode("ABC", 2)).toBeNull();
    expect(asciiCode("São", 10)).toBeNull();
    expect(text("ação".repeat(100), 5)).toBe("açãoa");
    expect(toSqlDate({ year: 2025, month: 2, day: 30 } as never)).toBeNull();
    expect(aliquotaPercent(5)).toBe("0.0500");
    expect(aliquotaPercent(-1)).toBeNull();
  });
});
