// manifest.json of a boleto round: status, hashes and sizes per item plus the job metadata.
import { ItemState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { ItemRow } from "../jobs/item-repo.js";
import type { JobRow } from "../jobs/job-repo.js";
import { stateName } from "../jobs/round-artifacts.js";

export function manifestDocument(job: JobRow, rows: readonly ItemRow[]) {
  return {
    job_id: job.id,
    tenant: job.tenant,
    metadata: job.metadata,
    retry_round: job.retryRounds,
    items: rows.map((r) => ({
      item_id: r.itemId,
      position: r.position,
      state: stateName(r.state),
      ...(r.state === ItemState.COMPLETED && r.result?.pdf
        ? {
            pdf: { name: r.result.pdf.name, sha256: r.result.pdf.sha256, size_bytes: r.result.pdf.sizeBytes },
            linha_digitavel: r.result.linhaDigitavel,
            nosso_numero: r.result.nossoNumeroFormatado,
          }
        : {}),
      ...(r.errors.length > 0 && r.state !== ItemState.COMPLETED ? { error_codes: r.errors.map((e) => e.code) } : {}),
    })),
  };
}
