// Wiring only. Leases, the scheduler and the sync loop arrive with the coordinator issue; until then
// every method answers UNIMPLEMENTED.
import { CoordinatorService } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";

await runService("coordinator", () => ({ services: [serve(CoordinatorService, {})] }));
