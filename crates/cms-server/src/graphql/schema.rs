//! The GraphQL schema, built once from the registered document and object types: the names
//! of `names.rs`, the field builders of `fields.rs`, the shapes of `shape.rs`.

use std::collections::HashSet;

use async_graphql::dynamic::{Enum, Field, Object, Scalar, Schema, SchemaError, Union};
use cms_core::schema::{Field as SchemaField, FieldType, Schemas};

use super::fields;
use super::names::{DOCUMENT_FIELDS, Names, RESERVED, field_name, pascal};
use super::shape::Shape;

/// The deepest query accepted. A standard introspection query (the `TypeRef` fragment nests
/// `ofType` seven or more levels) needs about 13.
pub const MAX_DEPTH: usize = 15;
/// The most complex query accepted (every selected field counts 1).
pub const MAX_COMPLEXITY: usize = 1000;

struct Builder {
    names: Names,
    /// The GraphQL type name of each document and (non-empty) object schema.
    type_names: std::collections::HashMap<String, String>,
    objects: Vec<Object>,
    unions: Vec<Union>,
}

/// Builds the schema of every registered document type.
pub fn build(schemas: &Schemas) -> Result<Schema, SchemaError> {
    let mut b = Builder {
        names: Names(RESERVED.iter().map(|s| s.to_string()).collect()),
        type_names: Default::default(),
        objects: Vec::new(),
        unions: Vec::new(),
    };
    for schema in schemas.documents() {
        let name = b.names.claim(&pascal(&schema.name));
        b.type_names.insert(schema.name.clone(), name);
    }
    for schema in schemas.all().iter().filter(|s| !s.is_document()) {
        if !schema.fields.is_empty() {
            let name = b.names.claim(&pascal(&schema.name));
            b.type_names.insert(schema.name.clone(), name);
        }
    }
    let mut query = Object::new("Query");
    let mut mutation = Object::new("Mutation");
    for schema in schemas.documents() {
        let type_name = b.type_names[&schema.name].clone();
        let mut object = fields::document_object(&type_name);
        let mut taken: HashSet<String> = DOCUMENT_FIELDS.iter().map(|s| s.to_string()).collect();
        for field in &schema.fields {
            object = object.field(b.data_field(&type_name, field, &mut taken));
        }
        b.objects.push(object);
        query = query
            .field(fields::all_field(&schema.name, &type_name))
            .field(fields::one_field(&schema.name, &type_name));
        for field in fields::mutation_fields(&schema.name, &type_name) {
            mutation = mutation.field(field);
        }
    }
    for schema in schemas.all().iter().filter(|s| !s.is_document()) {
        if let Some(type_name) = b.type_names.get(&schema.name).cloned() {
            let object = b.object_of(&type_name, &schema.fields);
            b.objects.push(object);
        }
    }
    let perspective = Enum::new("Perspective")
        .description("Which copy of a document a read shows: `draft` (the default) or `published` (the default, and the only one, for anonymous readers naming an organization).")
        .item("draft")
        .item("published");
    let mut builder = Schema::build("Query", Some("Mutation"), None)
        .register(Scalar::new("JSON").description("Any JSON value."))
        .register(perspective)
        .register(fields::image_object())
        .register(fields::file_object())
        .register(fields::asset_object())
        .register(fields::validation_object())
        .register(fields::validation_issue_object())
        .register(fields::document_meta_object())
        .register(query)
        .register(mutation)
        .limit_depth(MAX_DEPTH)
        .limit_complexity(MAX_COMPLEXITY);
    for object in b.objects {
        builder = builder.register(object);
    }
    for union in b.unions {
        builder = builder.register(union);
    }
    builder.finish()
}

impl Builder {
    /// An object type of `fields` (an inline object or a named object type).
    fn object_of(&mut self, type_name: &str, fields: &[SchemaField]) -> Object {
        let mut object = Object::new(type_name);
        let mut taken = HashSet::new();
        for field in fields {
            object = object.field(self.data_field(type_name, field, &mut taken));
        }
        object
    }

    fn data_field(
        &mut self,
        owner: &str,
        field: &SchemaField,
        taken: &mut HashSet<String>,
    ) -> Field {
        let name = field_name(&field.name, taken);
        let shape = self.shape(owner, &field.name, &field.ty);
        let mut out = fields::data_field(&name, &field.name, shape);
        if let Some(title) = &field.title {
            out = out.description(title.clone());
        }
        out
    }

    /// How a field's stored value is exposed.
    fn shape(&mut self, owner: &str, field_name: &str, ty: &FieldType) -> Shape {
        match ty {
            FieldType::String { .. }
            | FieldType::Text { .. }
            | FieldType::Date
            | FieldType::Datetime
            | FieldType::Url
            | FieldType::Email => Shape::String,
            FieldType::Number { .. } => Shape::Float,
            FieldType::Boolean => Shape::Boolean,
            FieldType::Slug { .. } => Shape::Slug,
            FieldType::Block | FieldType::Json => Shape::Json,
            FieldType::Image { .. } => Shape::Image,
            FieldType::File { .. } => Shape::File,
            FieldType::Reference { to } => {
                let targets: Vec<(String, String)> = to
                    .iter()
                    .filter_map(|t| self.type_names.get(t).map(|n| (t.clone(), n.clone())))
                    .collect();
                match targets.as_slice() {
                    [] => Shape::Json,
                    [one] => Shape::Reference {
                        type_name: one.1.clone(),
                        targets,
                    },
                    _ => {
                        let union_name =
                            self.names.claim(&format!("{owner}{}", pascal(field_name)));
                        let mut union = Union::new(&union_name);
                        for (_, member) in &targets {
                            union = union.possible_type(member);
                        }
                        self.unions.push(union);
                        Shape::Reference {
                            type_name: union_name,
                            targets,
                        }
                    }
                }
            }
            FieldType::Array { of, .. } => match of.as_slice() {
                [member] => Shape::List(Box::new(self.shape(owner, field_name, &member.ty))),
                _ => Shape::Json,
            },
            FieldType::Object { fields } if !fields.is_empty() => {
                let type_name = self.names.claim(&format!("{owner}{}", pascal(field_name)));
                let object = self.object_of(&type_name, fields);
                self.objects.push(object);
                Shape::Object(type_name)
            }
            FieldType::Object { .. } => Shape::Json,
            FieldType::Named(name) => match self.type_names.get(name) {
                Some(type_name) => Shape::Object(type_name.clone()),
                None => Shape::Json,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_core::schema::{demo_schemas, parse_schemas};

    /// `sdl` without its descriptions, on one line: a field whose arguments are described is
    /// printed over several lines, which this joins (`createPost(data: JSON!, ...): Post`).
    fn signatures(sdl: &str) -> String {
        let mut out = String::new();
        for (i, part) in sdl.split("\"\"\"").enumerate() {
            // Odd parts are the descriptions' text.
            if i % 2 == 0 {
                out.push_str(part);
                out.push(' ');
            }
        }
        out.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace("( ", "(")
            .replace(" )", ")")
    }

    #[test]
    fn the_demo_schemas_build() {
        let schemas = Schemas::new(demo_schemas()).unwrap();
        let sdl = signatures(&build(&schemas).unwrap().sdl());
        for wanted in [
            "allPost(",
            "includeChildOrganizations: Boolean, locale: String, search: String): [Post!]!",
            "Post(id: ID!",
            "SiteSettings(",
            "createPost(data: JSON!, publish: Boolean, locale: String): Post",
            "updatePost(id: ID!, data: JSON!, expectedRevision: Int, publish: Boolean, locale: String): Post",
            "deletePost(id: ID!): Boolean",
            "publishPost(id: ID!, expectedRevision: Int, locale: String): Post",
            "unpublishPost(id: ID!, expectedRevision: Int, locale: String): Post",
            "author: Author",
            "tags: [String]",
            "cover: ImageValue",
            "enum Perspective",
            "_meta: DocumentMeta!",
            "type DocumentMeta { revision: Int! locale: String fallbackLocales: JSON score: Float }",
        ] {
            assert!(sdl.contains(wanted), "{wanted} missing from\n{sdl}");
        }
    }

    #[test]
    fn colliding_and_reserved_names_are_renamed() {
        let schemas = Schemas::new(
            parse_schemas(&serde_json::json!([
                { "type": "document", "name": "JSON", "fields": [
                    { "name": "status", "type": "string" },
                    { "name": "_meta", "type": "string" },
                    { "name": "__x", "type": "string" },
                    { "name": "meta", "type": "object", "fields": [{ "name": "a", "type": "string" }] },
                    { "name": "any", "type": "reference", "to": ["JSON", "Query"] }
                ] },
                { "type": "document", "name": "Query", "fields": [{ "name": "a", "type": "string" }] },
                { "type": "document", "name": "JSON_2Meta", "fields": [{ "name": "a", "type": "string" }] },
                { "type": "document", "name": "asset", "fields": [{ "name": "a", "type": "string" }] },
                { "type": "document", "name": "documentMeta", "fields": [{ "name": "a", "type": "string" }] }
            ]))
            .unwrap(),
        )
        .unwrap();
        let sdl = build(&schemas).unwrap().sdl();
        for wanted in [
            "type JSON_2",
            "type Query_2",
            "field_status: String",
            "field__meta: String",
            "field___x: String",
            "type JSON_2Meta_2",
            "meta: JSON_2Meta_2",
            "union JSON_2Any",
            // The built-in asset record keeps `Asset`; a document type named `asset` yields.
            "type Asset_2",
            "allAsset_2(",
            // So is `DocumentMeta`, the type of every document's `_meta`.
            "type DocumentMeta_2",
        ] {
            assert!(sdl.contains(wanted), "{wanted} missing from\n{sdl}");
        }
    }
}
