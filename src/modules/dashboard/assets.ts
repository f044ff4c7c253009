import { assetFolder, besideModule } from '../../http/views.js';

/**
 * The dashboard's stylesheet (and any script a page adds), served as files under
 * /dashboard/assets/ and loaded under the page's CSP nonce: no inline style or script.
 */
export const dashboardAssets = assetFolder('/dashboard/assets', [besideModule(import.meta.url, 'assets')]);
