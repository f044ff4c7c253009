/*
 * The products module as routes and other modules call it. Each function lives in the file named
 * for its job: reads.ts (finding and listing), writes.ts (create, replace, patch, delete),
 * stock.ts (stock rules, inventory, an order's stock), csv.ts and images.ts.
 */
export { getProduct, listProducts, resolveProduct, shopOf, type CatalogCaller } from './reads.js';
export { createProduct, deleteProduct, patchProduct, replaceProduct } from './writes.js';
export { changeInventory, changeInventoryBulk } from './stock.js';
