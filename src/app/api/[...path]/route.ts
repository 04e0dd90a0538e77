import { errorResponse } from "@/http/respond";

/** Unknown API paths answer in the API's error shape, not with an HTML page. */
const notFound = async () => errorResponse("not_found", "No such API route");

export const GET = notFound;
export const POST = notFound;
export const PUT = notFound;
export const PATCH = notFound;
export const DELETE = notFound;
