/** `npm start`: the production server (see run-server.ts), built first when the sources changed. */
import { runServer } from "./run-server";

void runServer({ dev: false });
