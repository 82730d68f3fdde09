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

export function startOAuthServer(): Promise<OAuthTestServer>;
