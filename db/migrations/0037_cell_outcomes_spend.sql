ALTER TYPE "public"."cell_outcome" ADD VALUE 'condition_not_met';--> statement-breakpoint
ALTER TYPE "public"."cell_outcome" ADD VALUE 'over_budget';