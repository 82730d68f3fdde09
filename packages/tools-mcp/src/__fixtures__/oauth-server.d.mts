export interface OAuthServerStats {
  registrations: number;
  authorizations: number;
  codeExchanges: number;
  refreshes: number;
  scopesAsked: string[];
}

export interface OAuthTestServer {
  url: string;
  provider: {
    stats: OAuthServerStats;
    accessTokens: Map<string, unknown>;
    refreshTokens: Map<string, unknown>;
    expireAccessTokens(): void;
  };
  seenAuthorization: string[];
  close(): Promise<void>;
}

/** `echo`: also the tools "leak" and "leak-error", which echo the credentials they were sent. */
export function startOAuthServer(options?: { echo?: boolean }): Promise<OAuthTestServer>;
