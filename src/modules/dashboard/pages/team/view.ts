import type { DashboardRole } from '../../../../db/schema.js';
import type { InvitationView } from '../../invitations.js';
import type { UserView } from '../../users.js';
import type { FormState } from '../../view-types.js';

/** What the Team page and the invitation page draw. */
export interface TeamViews {
  team: FormState & {
    members: UserView[];
    invitations: InvitationView[];
    /** The roles this member may give (an admin gives every role but owner). */
    roles: readonly DashboardRole[];
    /** The invitation form as typed: a refused one is drawn again. */
    invite: { email: string; role: DashboardRole };
    /** A new invitation's link, drawn once in the answer to the form that made it. */
    created?: { email: string; link: string };
  };
  /** The invitation page: `loginToken` is the double-submit token of its cookie (as the sign-in form). */
  invitation: FormState & {
    businessName: string;
    email: string;
    role: DashboardRole;
    action: string;
    loginToken: string;
  };
}
