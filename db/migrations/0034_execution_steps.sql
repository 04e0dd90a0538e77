CREATE TABLE "execution_steps" (
	"execution_id" text NOT NULL,
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"row_id" text NOT NULL,
	"group_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"digest" text NOT NULL,
	"output" jsonb,
	"taken" text[] DEFAULT '{}' NOT NULL,
	"retry_on_resume" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "execution_steps_execution_id_scope_key_pk" PRIMARY KEY("execution_id","scope","key")
);
--> statement-breakpoint
ALTER TABLE "executions" ADD COLUMN "resumes" text[] DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE "execution_steps" ADD CONSTRAINT "execution_steps_row_id_rows_id_fk" FOREIGN KEY ("row_id") REFERENCES "public"."rows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "execution_steps_row_idx" ON "execution_steps" USING btree ("row_id");