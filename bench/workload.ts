// The documents of a run as the gateway sees them: the simulator's visible entries of each feed, in pages
// of the ADN's page size, rendered into the simulator's JSON envelope and parsed back with libs/adn (so the
// raw items are byte for byte what FetchBatch decodes). Also the mix of the feeds, for the report.
import { parseEnvelope, type RawLoteItem } from "../libs/adn/envelope.js";
import type { FeedLog } from "../tools/adn-sim/feeds.js";
import { envelope, loteItem } from "../tools/adn-sim/responses.js";

export interface FeedPages {
  ibge: string;
  pages: RawLoteItem[][];
}

export interface Mix {
  entries: number;
  visible: number;
  notes: number;
  events: number;
  hidden: number;
  holes: number;
  avgXmlBytes: number;
}

export function pagesOf(feed: FeedLog, pageSize: number): FeedPages {
  const visible = feed.entries.filter((e) => !e.hidden);
  const pages: RawLoteItem[][] = [];
  for (let i = 0; i < visible.length; i += pageSize) {
    const items = visible.slice(i, i + pageSize).map((e) => loteItem(e, undefined, 0));
    pages.push(parseEnvelope(JSON.stringify(envelope("DOCUMENTOS_LOCALIZADOS", "HOMOLOGACAO", items))).lote);
  }
  return { ibge: feed.ibge, pages };
}

export function mixOf(feeds: FeedLog[]): Mix {
  const mix: Mix = { entries: 0, visible: 0, notes: 0, events: 0, hidden: 0, holes: 0, avgXmlBytes: 0 };
  let xmlBytes = 0;
  for (const f of feeds) {
    mix.holes += f.holes.size;
    for (const e of f.entries) {
      mix.entries++;
      if (e.hidden) {
        mix.hidden++;
        continue;
      }
      mix.visible++;
      xmlBytes += Buffer.byteLength(e.xml, "utf8");
      if (e.facts.kind === "EVENTO") mix.events++;
      else mix.notes++;
    }
  }
  mix.avgXmlBytes = mix.visible ? xmlBytes / mix.visible : 0;
  return mix;
}
