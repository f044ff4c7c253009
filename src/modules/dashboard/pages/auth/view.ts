/** What the sign-in page draws: its double-submit token, the email typed, where to go next, and why it is shown. */
export interface AuthViews {
  login: { loginToken: string; email: string; next: string; error?: string; notice?: string };
}
