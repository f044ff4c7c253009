import { Type, type TProperties } from 'typebox';

/**
 * The query parameters every dashboard page takes beside its own, as the other pages of the
 * product do (`/pay?mode=test&lang=ar`, the storefront, the wallet app): `lang` draws the page in
 * that language (langOf reads it), `mode` names the sandbox or live data. A link that carries them
 * opens any page rather than its "some submitted values are invalid" (issue 54). A signed-in
 * member's mode only changes through the mode bar's form, which carries their CSRF token: a link
 * never moves a merchant into live (or out of it), so a `mode` the session is not in is ignored
 * and the mode bar says which data the page shows.
 */
export const SharedQuery = {
  lang: Type.Optional(Type.String({ maxLength: 16 })),
  mode: Type.Optional(Type.String({ maxLength: 16 })),
};

/** A page's query schema: its own parameters with the shared ones, anything else refused. */
export function pageQuery<P extends TProperties>(own: P) {
  return Type.Object({ ...SharedQuery, ...own }, { additionalProperties: false });
}
