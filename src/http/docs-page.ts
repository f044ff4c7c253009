import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

/** The product's name, as the API document, the root page and the /docs page say it. */
export const PRODUCT_NAME = 'Commerce Developer API';

/** The name as the top bar's logo: plain text in the system font, white on the bar's dark grey. */
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="40" viewBox="0 0 300 40">
<text x="0" y="27" font-family="system-ui,-apple-system,'Segoe UI',Roboto,sans-serif" font-size="20" font-weight="600" fill="#ffffff">${PRODUCT_NAME}</text>
</svg>`;

/** A small square with the product's initial, instead of Swagger's icon in the browser's tab. */
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">
<rect width="32" height="32" rx="6" fill="#1b1f24"/>
<text x="16" y="23" text-anchor="middle" font-family="system-ui,sans-serif" font-size="20" font-weight="700" fill="#ffffff">C</text>
</svg>`;

/**
 * A plain top bar: the product's colours (those of the root page), and no box to load another
 * document's URL (this page shows this server's document only).
 */
const THEME_CSS = `.swagger-ui .topbar{background:#1b1f24;padding:6px 0}
.swagger-ui .topbar .download-url-wrapper{display:none}
.swagger-ui .topbar a.link img{height:32px}`;

/**
 * `/docs` (@fastify/swagger-ui): the product's name in the tab and the top bar instead of
 * "Swagger UI" and the Fastify logo, which told a newcomer nothing about what they were reading.
 */
export function docsPageOptions(routePrefix: string): FastifySwaggerUiOptions {
  return {
    routePrefix,
    uiConfig: { docExpansion: 'list' },
    logo: { type: 'image/svg+xml', content: Buffer.from(LOGO_SVG), href: '/' },
    theme: {
      title: `${PRODUCT_NAME}: reference`,
      css: [{ filename: 'theme.css', content: THEME_CSS }],
      favicon: [
        {
          filename: 'favicon.svg',
          rel: 'icon',
          sizes: 'any',
          type: 'image/svg+xml',
          content: Buffer.from(FAVICON_SVG),
        },
      ],
    },
  };
}
