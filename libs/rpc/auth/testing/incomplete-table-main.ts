// A service whose access table leaves a method out, started the way every main.ts starts one: it must
// not start (interceptor.test.ts).
import { StoreService } from "../../../gen/malha/store/v1/store_pb.js";
import { runService } from "../../run.js";
import { serve } from "../../server.js";
import { type AccessTable, publicTable } from "../access.js";

const { listEvents: _decidedNothing, ...table } = publicTable(StoreService);
await runService("store", () => ({ services: [serve(StoreService, {}, table as AccessTable<typeof StoreService>)] }));
