import { ValidationError } from "../../lib/errors.ts";
import type { CrossChainApi } from "./api.ts";

/** Cross-chain funding with no source chains configured: an empty list, and every chain unknown. */
export const noCrossChain: CrossChainApi = {
  sources: () => ({ object: "list", data: [] }),
  quote: (_row, chain) => {
    throw new ValidationError(`unknown source chain "${chain}": no cross-chain sources are configured`);
  },
  record: (_row, chain) => {
    throw new ValidationError(`unknown source chain "${chain}": no cross-chain sources are configured`);
  },
};
