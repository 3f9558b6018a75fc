//! `--from-openapi` details, on the Swagger Petstore 3.0 document committed under
//! `tests/import/` (Apache-2.0: `tests/import/README.md`, `petstore-LICENSE`) and on small documents
//! made here: operations and their order, examples and generated values, `--params`, checks,
//! and errors that say where.

use super::*;

/// The fixture, read when the tests run (the image's build copies no test files).
fn petstore() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/import/petstore-openapi.yaml"
    ))
    .unwrap()
}

fn options() -> OpenApiOptions {
    OpenApiOptions {
        base_url: Some("http://127.0.0.1:9".into()),
        ..OpenApiOptions::default()
    }
}

fn import(doc: &str, options: &OpenApiOptions, params: Option<&Params>) -> Imported {
    import_text("api.yaml", "api", doc, options, params).unwrap_or_else(|e| panic!("{e}"))
}

fn err(doc: &str, options: &OpenApiOptions) -> String {
    import_text("api.yaml", "api", doc, options, None)
        .unwrap_err()
        .to_string()
}

/// The plan's text from the line naming `step` to the next step.
fn step_of<'a>(text: &'a str, step: &str) -> &'a str {
    let from = text
        .find(&format!("name = '{step}'"))
        .unwrap_or_else(|| panic!("no step {step}:\n{text}"));
    let rest = &text[from..];
    &rest[..rest[1..]
        .find("[[scenario.step]]")
        .map_or(rest.len(), |e| e + 1)]
}

/// A small document with `paths` (YAML, indented under `paths:`) and `components`.
fn doc(paths: &str, components: &str) -> String {
    format!(
        "openapi: 3.1.0\ninfo: {{title: t, version: '1'}}\nservers: [{{url: 'http://api.test/v1'}}]\n\
         paths:\n{paths}\ncomponents:\n{components}\n"
    )
}

#[test]
fn petstore_has_a_step_per_operation_with_examples_and_checks() {
    let plan = import(&petstore(), &options(), None);
    let t = &plan.text;
    assert_eq!(t.matches("[[scenario.step]]").count(), 19, "{t}");
    assert_eq!(t.matches("status = [200]").count(), 19);
    let add = step_of(t, "add_pet");
    assert!(add.contains("method = 'POST'\npath = '/pet'"), "{add}");
    // Pet: the required name and photoUrls, and the properties with examples (category's).
    assert!(
        add.contains(
            "json = { category = { id = 1, name = 'Dogs' }, id = 10, name = 'doggie', \
             photoUrls = [], status = 'available' }"
        ),
        "{add}"
    );
    let get = step_of(t, "get_pet_by_id");
    assert!(get.contains("path = '/pet/1'"), "{get}");
    assert!(get.contains("# path parameter petId: a minimal value of its schema"));
    assert!(get.contains("# security: api_key or petstore_auth"));
    let by_status = step_of(t, "find_pets_by_status");
    assert!(by_status.contains("path = '/pet/findByStatus?status=available'"));
    assert!(
        step_of(t, "upload_file").contains("request body (application/octet-stream) not generated")
    );
    assert!(step_of(t, "get_user_by_name").contains("path = '/user/string'"));
    assert!(plan.notes[0].starts_with("9 operation(s) declare security (api_key, petstore_auth)"));
    assert!(t.contains("base_url = 'http://127.0.0.1:9'"));
}

#[test]
fn operations_are_chosen_by_id_in_the_order_given() {
    let o = OpenApiOptions {
        operations: vec!["placeOrder".into(), "getPetById".into()],
        ..options()
    };
    let t = import(&petstore(), &o, None).text;
    let names: Vec<&str> = t.lines().filter(|l| l.starts_with("name = '")).collect();
    assert_eq!(
        names,
        [
            "name = 'api'",
            "name = 'api'",
            "name = 'place_order'",
            "name = 'get_pet_by_id'"
        ]
    );
    let o = OpenApiOptions {
        operations: vec!["getPetById".into(), "nope".into()],
        ..options()
    };
    let e = err(&petstore(), &o);
    assert!(
        e.starts_with("api.yaml: no operation with operationId nope; it has: updatePet, addPet,"),
        "{e}"
    );
}

#[test]
fn the_server_url_is_the_base_unless_given() {
    let t = import(&petstore(), &OpenApiOptions::default(), None).text;
    assert!(
        t.contains("base_url = 'https://petstore3.swagger.io/api/v3'"),
        "{t}"
    );
    let relative = &petstore().replace("https://petstore3.swagger.io/api/v3", "/api/v3");
    let e = err(relative, &OpenApiOptions::default());
    assert!(
        e.contains("first server's URL `/api/v3` is not an absolute")
            && e.ends_with("pass --base-url http://host:port"),
        "{e}"
    );
    let vars = doc(
        "  /a:\n    get:\n      responses: {'204': {description: ok}}",
        "  {}",
    )
    .replace(
        "'http://api.test/v1'",
        "'http://{host}:{port}/v1', variables: {host: {default: h.test}, port: {default: '8081'}}",
    );
    let t = import(&vars, &OpenApiOptions::default(), None).text;
    assert!(t.contains("base_url = 'http://h.test:8081/v1'"), "{t}");
    assert!(t.contains("status = [204]"));
}

#[test]
fn params_come_from_a_csv_column_of_the_same_name() {
    let params = Params {
        file: "ids.csv".into(),
        columns: vec!["petId".into(), "other".into()],
    };
    let t = import(&petstore(), &options(), Some(&params)).text;
    assert!(t.contains("[data.params]\nfile = 'ids.csv'"), "{t}");
    let get = step_of(&t, "get_pet_by_id");
    assert!(
        get.contains("path = '/pet/{{ data.params.petId }}'"),
        "{get}"
    );
    assert!(get.contains("the --params column of its name"));
    assert!(step_of(&t, "get_order_by_id").contains("path = '/store/order/1'"));
    let header = doc(
        "  /t:\n    get:\n      parameters: [{name: tenant, in: header, required: true, \
         schema: {type: string}}]\n      responses: {'200': {description: ok}}",
        "  {}",
    );
    let params = Params {
        file: "t.csv".into(),
        columns: vec!["tenant".into()],
    };
    let t = import(&header, &OpenApiOptions::default(), Some(&params)).text;
    assert!(t.contains("tenant = '{{ data.params.tenant }}'"), "{t}");
}

#[test]
fn minimal_instances_follow_the_schema() {
    let components = "  schemas:
    Node:
      type: object
      required: [name, children, size]
      properties:
        name: {type: string, minLength: 3, maxLength: 5}
        when: {type: string, format: date-time}
        children: {type: array, minItems: 1, items: {$ref: '#/components/schemas/Node'}}
        note: {type: string}
        id: {type: integer, readOnly: true, example: 7}
        size: {type: integer, minimum: 5, maximum: 9, exclusiveMinimum: true}
    Both:
      allOf:
        - {type: object, required: [a], properties: {a: {type: boolean}}}
        - {type: object, required: [b], properties: {b: {type: [number, 'null'], minimum: 2.5}}}
    Either:
      oneOf: [{type: string, format: email}, {type: integer}]";
    let paths = "  /n/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string, format: uuid}}]
    post:
      operationId: makeNode
      parameters:
        - {name: q, in: query, schema: {type: integer, default: 3}}
        - {name: skip, in: query, schema: {type: integer}}
        - {name: X-Api-Key, in: header, required: true, schema: {type: string}}
      requestBody:
        content:
          application/json: {schema: {$ref: '#/components/schemas/Node'}}
      responses: {'201': {description: made}, '2XX': {description: fine}, default: {description: no}}
    put:
      requestBody:
        content:
          application/x-www-form-urlencoded: {schema: {$ref: '#/components/schemas/Both'}}
      responses: {default: {description: any}}
    patch:
      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/Either'}, example: {x: 'a {{ b }}'}}}}
      responses: {'200': {description: ok}}";
    let plan = import(&doc(paths, components), &OpenApiOptions::default(), None);
    let t = &plan.text;
    let make = step_of(t, "make_node");
    assert!(
        make.contains("path = '/n/00000000-0000-4000-8000-000000000000?q=3'"),
        "{make}"
    );
    assert!(make.contains("X-Api-Key = '{{ env.X_API_KEY }}'"), "{make}");
    assert!(t.contains("secret_headers = ['X-Api-Key']"));
    // The recursion stops; readOnly and optional properties without examples are left out;
    // an exclusive minimum is passed.
    assert!(
        make.contains(
            "json = { children = [{ children = [{ children = [], name = 'strin', size = 6 }], \
             name = 'strin', size = 6 }], name = 'strin', size = 6 }"
        ),
        "{make}"
    );
    assert!(!make.contains("note =") && !make.contains("id = 7"));
    assert!(make.contains("name = 'strin'"), "{make}");
    assert!(
        make.contains("status = [200, 201, 202, 203, 204, 205, 206]"),
        "{make}"
    );
    let put = step_of(t, "put_n_id");
    assert!(put.contains("body = 'a=false&b=2.5'"), "{put}");
    assert!(put.contains("Content-Type = 'application/x-www-form-urlencoded'"));
    assert!(
        put.contains("no 2xx response documented: no status check") && !put.contains("status =")
    );
    let patch = step_of(t, "patch_n_id");
    assert!(
        patch.contains("json = { x = '{% raw %}a {{ b }}{% endraw %}' }"),
        "{patch}"
    );
}

#[test]
fn what_is_not_openapi_3_or_malformed_is_refused_with_its_place() {
    assert!(
        err("swagger: '2.0'\npaths: {}", &options())
            .starts_with("api.yaml: not an OpenAPI 3 document (swagger: \"2.0\")")
    );
    assert!(err("a: [", &options()).starts_with("api.yaml: not YAML or JSON"));
    let external = doc(
        "  /a:\n    get:\n      parameters: [{$ref: 'other.yaml#/p'}]\n      responses: {}",
        "  {}",
    );
    let e = err(&external, &options());
    assert!(
        e.starts_with("api.yaml: paths./a.get.parameters[0]: `$ref: other.yaml#/p` points outside"),
        "{e}"
    );
    let dangling = doc(
        "  /a:\n    post:\n      requestBody: {$ref: '#/components/requestBodies/Gone'}\n      responses: {}",
        "  {}",
    );
    let e = err(&dangling, &options());
    assert!(e.starts_with("api.yaml: paths./a.post.requestBody: `$ref: #/components/requestBodies/Gone` points at nothing"), "{e}");
    assert_eq!(
        err(&doc("  {}", "  {}"), &options()),
        "api.yaml: no operations under `paths`"
    );
}

#[test]
fn the_petstore_plan_reads_with_the_plan_reader() {
    use crate::plan::read::{ReadOptions, read_file};
    let text = import(&petstore(), &options(), None).text;
    let dir = std::env::temp_dir().join(format!("volley-openapi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plan.toml");
    std::fs::write(&path, &text).unwrap();
    let read = ReadOptions {
        reflection: false,
        ..ReadOptions::default()
    };
    let plan = read_file(&path, &read)
        .and_then(|d| d.prepare())
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(plan.scenarios[0].steps.len(), 19);
}
