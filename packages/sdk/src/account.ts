import { Pigeon, type PigeonOptions, transportOf } from './client.js';
import { contract } from './contract.js';
import type { RequestOptions, Transport } from './transport.js';
import type {
  Credentials,
  DeploymentConfig,
  InvitationAccepted,
  InviteResult,
  Member,
  MemberRemoved,
  Members,
  OAuthConfig,
  OAuthProviderId,
  Project,
  ProjectReset,
  ProjectUpdateBody,
  Role,
  SecurityState,
  SetupState,
  SignInMethods,
  User,
} from './types.js';

export type PigeonAccountOptions = Omit<PigeonOptions, 'apiKey' | 'session'>;

/**
 * A person's account, acting with the browser's session cookie: signing in and out, their projects
 * (keys, settings), members and invitations. Pigeon's console is built on it, in a page served by
 * Pigeon itself (the cookie is `HttpOnly` and `SameSite`, and goes with same-origin requests only).
 * `project(id)` gives the full {@link Pigeon} client acting in one project as this member.
 */
export class PigeonAccount {
  private readonly transport: Transport;

  constructor(private readonly options: PigeonAccountOptions = {}) {
    this.transport = transportOf(options, { session: {} });
  }

  /** The project API (contacts, emails, domains, webhooks…) as this member of `projectId`. */
  project(projectId: string): Pigeon {
    return new Pigeon({ ...this.options, session: { projectId } });
  }

  /** The deployment: whether sign-up is open, its providers, transport and public URL (no sign-in needed). */
  readonly system = {
    config: (options?: RequestOptions): Promise<DeploymentConfig> =>
      this.transport.call(contract.system.config, {}, options),
  };

  readonly auth = {
    /** Starts a session (sets the cookie). 401 `INVALID_CREDENTIALS`; 429 `TOO_MANY_ATTEMPTS` after repeated failures. */
    login: (body: Credentials, options?: RequestOptions): Promise<User> =>
      this.transport.call(contract.auth.login, { body }, options),
    /** Creates an account and starts its session; 403 `SIGNUPS_DISABLED` where the deployment allows none. */
    signup: (body: Credentials, options?: RequestOptions): Promise<User> =>
      this.transport.call(contract.auth.signup, { body }, options),
    /** Ends the session server-side (a copy of the cookie stops working too). */
    logout: (options?: RequestOptions): Promise<{ success: true }> =>
      this.transport.call(contract.auth.logoutPost, { body: undefined }, options),
    verifyEmail: (token: string, options?: RequestOptions): Promise<User> =>
      this.transport.call(contract.auth.verifyEmail, { body: { token } }, options),
    /** Mails a new verification link to the signed-in person. */
    requestVerification: (options?: RequestOptions): Promise<{ success: true; message: string }> =>
      this.transport.call(contract.auth.requestVerification, { body: undefined }, options),
    /** Mails a reset link (answers the same whether or not the address has an account). */
    requestPasswordReset: (email: string, options?: RequestOptions): Promise<{ success: true; message: string }> =>
      this.transport.call(contract.auth.requestPasswordReset, { body: { email } }, options),
    resetPassword: (token: string, password: string, options?: RequestOptions): Promise<{ success: true }> =>
      this.transport.call(contract.auth.resetPassword, { body: { token, password } }, options),
    /** The sign-in providers configured on this deployment (none by default). */
    oauthConfig: (options?: RequestOptions): Promise<OAuthConfig> =>
      this.transport.call(contract.auth.oauthConfig, {}, options),
    signInMethods: (options?: RequestOptions): Promise<SignInMethods> =>
      this.transport.call(contract.auth.signInMethods, {}, options),
    unlinkIdentity: (provider: OAuthProviderId, options?: RequestOptions): Promise<SignInMethods> =>
      this.transport.call(contract.auth.unlinkIdentity, { params: { provider } }, options),
    /** Joins the project an invitation (mailed to this person's address) names. */
    acceptInvitation: (token: string, options?: RequestOptions): Promise<InvitationAccepted> =>
      this.transport.call(contract.auth.acceptInvitation, { body: { token } }, options),
  };

  /** The signed-in person and their projects. */
  readonly me = {
    /** 401 `UNAUTHORIZED` when nobody is signed in. */
    get: (options?: RequestOptions): Promise<User> => this.transport.call(contract.users.me, {}, options),
    projects: (options?: RequestOptions): Promise<Project[]> =>
      this.transport.call(contract.users.listProjects, {}, options),
    createProject: (name: string, options?: RequestOptions): Promise<Project> =>
      this.transport.call(contract.users.createProject, { body: { name } }, options),
    /** Settings (OWNER or ADMIN). */
    updateProject: (id: string, body: ProjectUpdateBody, options?: RequestOptions): Promise<Project> =>
      this.transport.call(contract.users.updateProject, { params: { id }, body }, options),
    /** Deletes the project and all its data (OWNER). */
    deleteProject: (id: string, options?: RequestOptions): Promise<void> =>
      this.transport.call(contract.users.deleteProject, { params: { id } }, options),
    /** Replaces both keys at once (OWNER or ADMIN); the old ones stop working at once. */
    regenerateKeys: (id: string, options?: RequestOptions): Promise<Project> =>
      this.transport.call(contract.users.regenerateKeys, { params: { id } }, options),
    /** Wipes the project's data, keeping the project, its members and keys (OWNER). */
    resetProject: (id: string, options?: RequestOptions): Promise<ProjectReset> =>
      this.transport.call(contract.users.resetProject, { params: { id } }, options),
  };

  /** One project's state and people. */
  readonly projects = {
    setupState: (id: string, options?: RequestOptions): Promise<SetupState> =>
      this.transport.call(contract.projects.setupState, { params: { id } }, options),
    /** Bounce and complaint rates, health, suspensions and the relay's state. */
    security: (id: string, options?: RequestOptions): Promise<SecurityState> =>
      this.transport.call(contract.projects.security, { params: { id } }, options),
    /** Lifts a campaign pause set by the deliverability thresholds (OWNER or ADMIN). */
    resumeCampaigns: (id: string, options?: RequestOptions): Promise<SecurityState> =>
      this.transport.call(contract.projects.resumeCampaigns, { params: { id } }, options),
    members: {
      list: (id: string, options?: RequestOptions): Promise<Members> =>
        this.transport.call(contract.projects.listMembers, { params: { id } }, options),
      /** Adds an existing account, or mails an invitation (OWNER or ADMIN). */
      invite: (id: string, email: string, role: Role = 'MEMBER', options?: RequestOptions): Promise<InviteResult> =>
        this.transport.call(contract.projects.inviteMember, { params: { id }, body: { email, role } }, options),
      setRole: (id: string, userId: string, role: Role, options?: RequestOptions): Promise<Member> =>
        this.transport.call(contract.projects.updateMember, { params: { id, userId }, body: { role } }, options),
      /** Removes a member; `sawSecretKey` says whether the keys should be rotated. */
      remove: (id: string, userId: string, options?: RequestOptions): Promise<MemberRemoved> =>
        this.transport.call(contract.projects.removeMember, { params: { id, userId } }, options),
    },
  };
}
