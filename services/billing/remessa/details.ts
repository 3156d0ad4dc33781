// billing_jobs.details of a remessa job: the layout asked for and the template it was written with.
import type { CnabLayout } from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import { Doc } from "../jobs/json-doc.js";

export interface RemessaDetails {
  layout: CnabLayout;
  template: string;
}

export const remessaDetailsJson = (d: RemessaDetails): string => JSON.stringify({ layout: d.layout, template: d.template });

export function remessaDetailsOf(text: string | null): RemessaDetails | undefined {
  if (!text) return undefined;
  const d = Doc.parse(text, "billing_jobs.details");
  return { layout: d.num("layout"), template: d.str("template") };
}
