/** `npm run api:generate`: writes the OpenAPI document and the client's types. */
import fs from "node:fs";
import path from "node:path";
import { generatedFiles } from "./generated-files";

const root = path.resolve(import.meta.dirname, "../..");
for (const { file, text } of await generatedFiles()) {
  const before = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
  fs.writeFileSync(file, text);
  console.log(`${before === text ? "unchanged" : "wrote"} ${path.relative(root, file)}`);
}
