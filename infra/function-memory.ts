/**
 * Functions' memory sizes (MB) that code outside their stack needs too: the
 * runtime's bootstrap sizes Node's heap from them, so a bench or test that
 * runs a function as Lambda starts it reads them here. Kept free of CDK, so
 * a measured process can import it without loading aws-cdk-lib.
 */

/** The sync function: whole inventories are parsed in memory. */
export const SYNC_MEMORY_SIZE = 1536;
