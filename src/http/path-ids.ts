/**
 * The ids a path may carry. Ours are generated and client ids are narrower, so anything
 * else cannot exist: routes answer 404 for it before any lookup.
 */
export const PATH_ID = /^[A-Za-z0-9_-]{1,64}$/;
