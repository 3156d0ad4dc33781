// Wiring only. Blob storage, signed links and retention arrive with the billing issue; until then
// every method answers UNIMPLEMENTED.
import { ArtifactsService } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";

await runService("artifacts", () => ({ services: [serve(ArtifactsService, {})] }));
