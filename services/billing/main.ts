// Wiring only. Boleto, remessa and retorno jobs arrive with the billing issue; until then every
// method answers UNIMPLEMENTED.
import { BillingService } from "../../libs/gen/malha/billing/v1/billing_pb.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";

await runService("billing", () => ({ services: [serve(BillingService, {})] }));
