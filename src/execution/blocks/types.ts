import type { Block } from "../../contracts/workflow";
import type { ExpressionScope } from "../expressions";

export interface BlockContext {
  scope: ExpressionScope;
  signal: AbortSignal;
  executionId: string;
}

/** What a block produced, and for a condition which port it took. */
export interface BlockResult {
  output: unknown;
  port?: "true" | "false";
}

export type BlockRunner<B extends Block = Block> = (
  block: B,
  ctx: BlockContext,
) => Promise<BlockResult>;

/** A block failure with a message meant for people. */
export class BlockError extends Error {
  constructor(
    readonly blockId: string,
    message: string,
  ) {
    super(message);
    this.name = "BlockError";
  }
}
